package extract

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/transform"
)

// Job describes one extraction.
type Job struct {
	Data      dataset.Dataset
	DataKey   string // identifies the data's content and split for the cache (dataset.Spec.Key)
	Model     *backbone.Model
	Preset    transform.Preset
	Output    int    // index into Model.Outputs (0: the feature)
	CacheDir  string // "" disables caching and resuming
	BatchSize int    // images per inference call (default 32)
	Chunk     int    // images per resumable chunk (default 2048)
	Threads   int    // ONNX Runtime threads (0: all CPUs)
	Workers   int    // decoding goroutines (0: one per CPU)
	Depth     int    // batch buffers in flight between decoding and inference (default and minimum 2)
	// Spin lets ONNX Runtime's idle threads spin (its default). Off by
	// default here: spinning threads take CPU from the decoding workers.
	Spin bool
	// Progress, if not nil, is called after every batch with the number
	// of images done, the total, and the rate in images per second.
	Progress func(done, total int, rate float64)
}

// Key returns the cache key of the job.
func (j *Job) Key() string {
	p := j.Preset
	s := fmt.Sprintf("v2|%s|%s|%s|%d|%v|%d|%v|%v|%s|%d", j.Model.Name, j.Model.Hash, p.Name, p.Resize, p.Filter, p.Crop, p.Mean, p.Std, j.DataKey, j.Output)
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:24]
}

// CachePath returns where the job's features are cached.
func (j *Job) CachePath() string {
	return filepath.Join(j.CacheDir, j.Model.Name+"-"+j.Key()+".npz")
}

func (j *Job) chunkPath(k int) string {
	return filepath.Join(j.CacheDir, fmt.Sprintf("%s-%s.part%05d.npz", j.Model.Name, j.Key(), k))
}

// Run extracts (or loads from the cache) the features of every image.
// It reports whether the result came from the cache.
func Run(ctx context.Context, j *Job) (*features.Set, bool, error) {
	if j.BatchSize <= 0 {
		j.BatchSize = 32
	}
	if j.Chunk <= 0 {
		j.Chunk = 2048
	}
	if j.Chunk%j.BatchSize != 0 {
		j.Chunk = (j.Chunk/j.BatchSize + 1) * j.BatchSize
	}
	if j.Output < 0 || j.Output >= len(j.Model.Outputs) {
		return nil, false, fmt.Errorf("extract: %s has no output %d", j.Model.Name, j.Output)
	}
	if j.CacheDir != "" {
		if err := os.MkdirAll(j.CacheDir, 0o755); err != nil {
			return nil, false, fmt.Errorf("extract: the feature cache folder %s: %w", j.CacheDir, err)
		}
		if s, err := features.Load(j.CachePath()); err == nil && s.N == j.Data.Len() {
			// the key is the content, so the data may have moved since
			for i := range s.Paths {
				s.Paths[i] = j.Data.Path(i)
			}
			return s, true, nil
		}
	}
	n, dim := j.Data.Len(), j.Model.Dims[j.Output]
	if n == 0 {
		return nil, false, fmt.Errorf("extract: empty data set")
	}
	out := &features.Set{N: n, D: dim, X: make([]float32, n*dim), Labels: make([]int, n),
		Paths: make([]string, n), ClassNames: j.Data.Classes()}
	for i := 0; i < n; i++ {
		out.Labels[i], out.Paths[i] = j.Data.Label(i), j.Data.Path(i)
	}
	var sess *session
	start := time.Now()
	done := 0
	for c := 0; c*j.Chunk < n; c++ {
		lo, hi := c*j.Chunk, min(n, (c+1)*j.Chunk)
		if j.CacheDir != "" {
			if s, err := features.Load(j.chunkPath(c)); err == nil && s.N == hi-lo && s.D == dim {
				copy(out.X[lo*dim:hi*dim], s.X)
				done = hi
				continue // resumed
			}
		}
		if sess == nil {
			var err error
			if sess, err = j.session(); err != nil {
				return nil, false, err
			}
			defer sess.Close()
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		if err := j.batches(ctx, sess, lo, hi, out, start, &done); err != nil {
			return nil, false, err
		}
		if j.CacheDir != "" {
			part := &features.Set{N: hi - lo, D: dim, X: out.X[lo*dim : hi*dim], Labels: out.Labels[lo:hi]}
			if err := features.Save(j.chunkPath(c), part); err != nil {
				return nil, false, err
			}
		}
	}
	out.ExtractSeconds = time.Since(start).Seconds()
	if j.CacheDir != "" {
		if err := features.Save(j.CachePath(), out); err != nil {
			return nil, false, err
		}
		for c := 0; c*j.Chunk < n; c++ {
			os.Remove(j.chunkPath(c))
		}
	}
	return out, false, nil
}

// session compiles the job's backbone output (newSession).
func (j *Job) session() (*session, error) {
	return newSession(j.Model, j.Output, j.Preset, sessionOptions{BatchSize: j.BatchSize, Workers: j.Workers, Depth: j.Depth,
		ORT: backbone.SessionOptions{Threads: j.Threads, NoSpin: !j.Spin}})
}

// batches runs images lo..hi through the session (session.extract) into
// out, reporting progress.
func (j *Job) batches(ctx context.Context, sess *session, lo, hi int, out *features.Set, start time.Time, done *int) error {
	dim := out.D
	return sess.Extract(ctx, j.Data, lo, hi, out.X[lo*dim:hi*dim], func(d int) {
		*done = d
		if j.Progress != nil {
			j.Progress(d, out.N, float64(d)/time.Since(start).Seconds())
		}
	})
}

// OpenBackbone builds a backbone from "name[:path]". Without a path, the
// per-layer .npy models (squeezenet, mobilenetv2) are read from
// modelsDir/squeezenet1.1 and modelsDir/mobilenetv2-1.0; with modelsDir
// empty they need a path.
func OpenBackbone(spec, modelsDir string) (*backbone.Model, error) {
	var models fs.FS
	if modelsDir != "" {
		models = os.DirFS(modelsDir)
	}
	return OpenBackboneFS(spec, models, modelsDir)
}

// OpenBackboneFS is OpenBackbone with the models folder as a file system,
// for example the weights package zoo ships (zoo.FS()): squeezenet and
// mobilenetv2 without a path read models' squeezenet1.1/ and
// mobilenetv2-1.0/ (see ModelFolder); with models nil they need a path.
// source names models in errors and in the weights' Source. The backbone
// is the same (the same graph and weights digest) whichever file system
// holds the same files.
//
// Every error starts with "backbone SPEC: " (the spec named once).
func OpenBackboneFS(spec string, models fs.FS, source string) (*backbone.Model, error) {
	s, err := ParseBackbone(spec)
	if err != nil {
		return nil, err
	}
	return s.Open(models, source)
}

// Open opens the backbone as OpenBackboneFS does.
func (s BackboneSpec) Open(models fs.FS, source string) (*backbone.Model, error) {
	m, err := s.open(models, source)
	if err != nil {
		return nil, fmt.Errorf("backbone %s: %w", s, err)
	}
	return m, nil
}

func (s BackboneSpec) open(models fs.FS, source string) (*backbone.Model, error) {
	weights := func() (*backbone.Weights, error) {
		if s.Path != "" {
			return backbone.LoadNPYDir(s.Path)
		}
		sub, _ := s.Folder()
		if models == nil {
			return nil, fmt.Errorf("no weights folder given (%s:DIR, or a models folder holding %s)", s.Name, sub)
		}
		dir, err := fs.Sub(models, sub)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		return backbone.LoadNPYFS(dir, filepath.Join(source, sub))
	}
	switch s.Name {
	case "squeezenet", "mobilenetv2":
		w, err := weights()
		if err != nil {
			return nil, err
		}
		if s.Name == "squeezenet" {
			return backbone.SqueezeNet(w)
		}
		return backbone.MobileNetV2(w)
	case "resnet50", "vit":
		w, err := backbone.LoadCheckpoint(s.Path)
		if err != nil {
			return nil, err
		}
		if s.Name == "resnet50" {
			return backbone.ResNet50(w)
		}
		if w, err = backbone.FromAugReg(w); err != nil {
			return nil, err
		}
		h := s.Heads
		if h == 0 {
			if t, ok := w.Tensors["patch_embed.proj.weight"]; ok && len(t.Shape) > 0 && t.Shape[0]%64 == 0 {
				h = int(t.Shape[0] / 64) // ViT-S/B/L all use 64-wide heads
			}
		}
		return backbone.ViT(w, h)
	}
	return backbone.FromONNXFile(s.Path, s.Output) // onnx (ParseBackbone knows no other name)
}

// ImageError is an image of the data set that could not be read or
// decoded: extraction stops at the first (deploy names them all).
type ImageError struct {
	Index int    // the image's index in the data set
	Path  string // its path
	Err   error
}

func (e *ImageError) Error() string {
	return fmt.Sprintf("extract: image %d (%s): %v", e.Index, e.Path, e.Err)
}

func (e *ImageError) Unwrap() error { return e.Err }
