package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	// Beam's file systems for paths with a scheme: memfs (in memory, for
	// tests) and gs (Google Cloud Storage, registered by the worker harness
	// as well).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
)

// A feature file, model file or statistics file whose path has a scheme
// (memfs://, gs://) is read and written through Beam's file systems
// (io/filesystem), so workers need no shared mount for them; a plain path
// is a local file, read and written as flycl does (the model file through
// the store, as a new file).

// openFS opens the Beam file system of path's scheme. Beam's s3 file system
// panics, rather than returning an error, when the AWS configuration cannot
// be loaded (a malformed ~/.aws/config, a profile that does not exist): the
// panic comes back here as an error naming the path.
func openFS(ctx context.Context, path string) (fs filesystem.Interface, err error) {
	defer func() {
		if r := recover(); r != nil {
			fs, err = nil, fmt.Errorf("pipeline: %s: opening its file system: %v", path, r)
		}
	}()
	return filesystem.New(ctx, path)
}

// isURL reports whether path names a file of a Beam file system.
func isURL(path string) bool { return strings.Contains(path, "://") }

// readURL reads the whole file at path through Beam's file systems.
func readURL(ctx context.Context, path string) ([]byte, error) {
	fs, err := openFS(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", path, err)
	}
	defer fs.Close()
	b, err := filesystem.Read(ctx, fs, path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: read %s: %w", path, err)
	}
	return b, nil
}

// writeURL writes data to path through Beam's file systems. The data is
// complete before the file is opened, so a failure never commits a part
// of it (these file systems commit a file when it is closed).
func writeURL(ctx context.Context, path string, data []byte) error {
	fs, err := openFS(ctx, path)
	if err != nil {
		return fmt.Errorf("pipeline: %s: %w", path, err)
	}
	defer fs.Close()
	if err := filesystem.Write(ctx, fs, path, data); err != nil {
		return fmt.Errorf("pipeline: write %s: %w", path, err)
	}
	return nil
}

// loadFeatures reads the feature file at path (local or through Beam's
// file systems).
func loadFeatures(ctx context.Context, path string) (*features.Set, error) {
	if !isURL(path) {
		return features.Load(path)
	}
	b, err := readURL(ctx, path)
	if err != nil {
		return nil, err
	}
	return features.Read(bytes.NewReader(b), int64(len(b)), path)
}

// localCopy returns a local path with the content of path: path itself
// when it is local, else a copy in this process's temporary folder, which
// remove deletes.
func localCopy(ctx context.Context, path string) (local string, remove func(), err error) {
	if !isURL(path) {
		return path, func() {}, nil
	}
	b, err := readURL(ctx, path)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp("", "flycl-beam-*.npz")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.Remove(f.Name()) }
	if _, err := f.Write(b); err != nil {
		f.Close()
		remove()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, err
	}
	return f.Name(), remove, nil
}

// saveStats writes the statistics file (local: atomically).
func saveStats(ctx context.Context, path string, sf *modelfile.StatsFile) error {
	if !isURL(path) {
		return modelfile.SaveStats(path, sf)
	}
	var b bytes.Buffer
	if err := modelfile.EncodeStats(&b, sf); err != nil {
		return err
	}
	return writeURL(ctx, path, b.Bytes())
}

// ErrModelExists is wrapped by the error for a local model file (Out)
// that exists: the pipeline writes a new model file and replaces none
// (one that exists may be served, or have a journal of its changes).
var ErrModelExists = errors.New("pipeline: the model file exists")

func errModelExists(path string) error {
	return fmt.Errorf("%w: %s: the pipeline writes a new model file and does not replace one (remove or move it, or teach it the task with flycl merge --model %s and the statistics of --stats-out)", ErrModelExists, path, path)
}

// checkNewModel refuses, before any work, a local model file that
// exists (saveModel would refuse it at the end).
func checkNewModel(path string) error {
	if path == "" || isURL(path) {
		return nil
	}
	if _, err := os.Stat(path); err == nil {
		return errModelExists(path)
	}
	return nil
}

// saveModel writes the model file of the model m learned from the
// statistics sf: a local one through the store (store.Open + Update: its
// lock, so not while a server or a learn holds it, and its atomic,
// durable save), as a new file only, since a model file that exists may
// be served or have a journal of its changes; one on a Beam file system
// in one write when it is complete (object stores have no locks: the
// pipeline is then its only writer by convention).
func saveModel(ctx context.Context, path string, m *flycl.Model, sf *modelfile.StatsFile) error {
	if !isURL(path) {
		st, err := store.Open(ctx, path, &store.Options{Command: "flycl-beam (the pipeline's finalizer)"})
		if err != nil {
			return err
		}
		defer st.Close()
		if st.Exists() {
			return errModelExists(path)
		}
		if err := st.Create(&deploy.Model{Model: m, Pipeline: sf.Pipeline}); err != nil {
			return err
		}
		if err := st.Update(ctx, func(*deploy.Model) (store.Change, error) { return store.Change{}, nil }); err != nil {
			return err
		}
		return st.Close()
	}
	var b bytes.Buffer
	if err := modelfile.Encode(&b, &modelfile.File{Snapshot: m.Snapshot(), Pipeline: sf.Pipeline}); err != nil {
		return err
	}
	return writeURL(ctx, path, b.Bytes())
}

// A data set (Options.Data) whose path has a scheme ("folder:memfs://b/imgs",
// "folder:gs://b/imgs.tar.gz", "cifar10:gs://b/cifar-10-python.tar.gz") is
// staged: each process that opens it (the launcher for the plan, each
// worker in its extraction's Setup) copies it through Beam's file systems
// into its own temporary folder and opens the copy as a local data set,
// so workers need no shared mount. An archive is one file; a folder is
// every file at most three levels under it (split/class/image), listed by
// glob. The copy goes when the process is done with it.
const stageDepth = 3

// localData returns the data set spec data with a local path, and a
// function that removes what it staged.
func localData(ctx context.Context, data string) (local string, remove func(), err error) {
	kind, path, ok := strings.Cut(data, ":")
	if !ok || !isURL(path) {
		return data, func() {}, nil
	}
	local, remove, err = stage(ctx, path)
	if err != nil {
		return "", nil, fmt.Errorf("pipeline: data set %s: %w", data, err)
	}
	return kind + ":" + local, remove, nil
}

// localBackbone returns the backbone spec (extract.ParseBackbone:
// NAME:PATH, vit:PATH@HEADS, onnx:PATH#OUTPUT) with its weights staged
// as a data set's are when their path has a scheme (a folder of .npy
// files, a checkpoint or an ONNX graph), and a function that removes
// them.
func localBackbone(ctx context.Context, spec string) (local string, remove func(), err error) {
	name, path, ok := strings.Cut(spec, ":")
	if !ok || !isURL(path) {
		return spec, func() {}, nil
	}
	suffix := ""
	switch name {
	case "vit":
		if i := strings.Index(path, "@"); i >= 0 {
			path, suffix = path[:i], path[i:]
		}
	case "onnx":
		if i := strings.Index(path, "#"); i >= 0 {
			path, suffix = path[:i], path[i:]
		}
	}
	local, remove, err = stage(ctx, path)
	if err != nil {
		return "", nil, fmt.Errorf("pipeline: backbone %s: %w", spec, err)
	}
	return name + ":" + local + suffix, remove, nil
}

// stage copies the file or folder at path (a Beam file system's) into a
// new temporary folder and returns the local path of the copy.
func stage(ctx context.Context, path string) (local string, remove func(), err error) {
	fs, err := openFS(ctx, path)
	if err != nil {
		return "", nil, err
	}
	defer fs.Close()
	dir, err := os.MkdirTemp("", "flycl-beam-data-*")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	fail := func(err error) (string, func(), error) {
		remove()
		return "", nil, err
	}
	base := strings.TrimSuffix(path, "/")
	// one file (an archive), kept under its own name: the name says how
	// it is read (.tar.gz, .tar)
	if files, err := fs.List(ctx, base); err == nil && len(files) == 1 && files[0] == base {
		dst := filepath.Join(dir, filepath.Base(base))
		if err := copyURL(ctx, fs, base, dst); err != nil {
			return fail(err)
		}
		return dst, remove, nil
	}
	root := filepath.Join(dir, "data")
	n := 0
	glob := base
	for range stageDepth {
		glob += "/*"
		files, err := fs.List(ctx, glob)
		if err != nil {
			return fail(err)
		}
		for _, f := range files {
			rel := strings.TrimPrefix(f, base+"/")
			if rel == f || !filepath.IsLocal(rel) {
				return fail(fmt.Errorf("listed %s, not under the folder", f))
			}
			dst := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return fail(err)
			}
			if err := copyURL(ctx, fs, f, dst); err != nil {
				return fail(err)
			}
			n++
		}
	}
	if n == 0 {
		return fail(fmt.Errorf("no file at %s nor under it", path))
	}
	return root, remove, nil
}

// copyURL copies the file src of fs to the new local file dst.
func copyURL(ctx context.Context, fs filesystem.Interface, src, dst string) error {
	r, err := fs.OpenRead(ctx, src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	defer r.Close()
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return fmt.Errorf("read %s: %w", src, err)
	}
	return w.Close()
}
