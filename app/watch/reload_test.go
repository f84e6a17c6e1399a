package watch

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/vision/imageio"
)

// meanExtractor's features are a frame's mean red, green and blue in
// [0, 1], with a little of the frame's noise.
type meanExtractor struct{}

func (meanExtractor) Dim() int     { return 3 }
func (meanExtractor) Name() string { return "mean" }

func (meanExtractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	out := make([]float32, 0, 3*len(imgs))
	for _, im := range imgs {
		var m [3]float64
		for i := 0; i < len(im.Pix); i += 3 {
			for k := range 3 {
				m[k] += float64(im.Pix[i+k])
			}
		}
		n := float64(im.W*im.H) * 255
		out = append(out, float32(m[0]/n), float32(m[1]/n), float32(m[2]/n))
	}
	return out, nil
}

// paced is a file-like (not live) source of noisy frames of one colour,
// one every few milliseconds, until its context ends: every frame is
// classified, in order, so a frame lost to an error shows as a gap.
type paced struct {
	colour [3]float64
	every  time.Duration
}

func (p *paced) Live() bool     { return false }
func (p *paced) String() string { return "paced" }
func (p *paced) Open(ctx context.Context) (Stream, error) {
	return &pacedStream{p: p, ctx: ctx}, nil
}

type pacedStream struct {
	p   *paced
	ctx context.Context
	n   int
}

func (s *pacedStream) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	select {
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	case <-time.After(s.p.every):
	}
	if dst.W != 8 || dst.H != 6 {
		*dst = *imageio.NewRGB(8, 6)
	}
	s.n++
	for i := 0; i < len(dst.Pix); i += 3 {
		for k := range 3 {
			v := s.p.colour[k] + float64((i/3*7+s.n*13+k*5)%21) - 10
			dst.Pix[i+k] = uint8(min(max(v, 0), 255))
		}
	}
	return dst, nil
}

func (s *pacedStream) Close() error { return nil }

// lockedBuffer is Run's output, read while Run writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// colourSamples are n noisy mean-colour features around c (in [0, 1]).
func colourSamples(c [3]float32, n int) []float32 {
	var x []float32
	for i := range n {
		for k := range 3 {
			x = append(x, c[k]+float32((i*7+k*3)%5-2)/100)
		}
	}
	return x
}

// TestReloadLearnFromInbox is labelling from the stream, end to end, in
// one process as flycl watch and flycl serve would share the files:
// watch runs on a stream of green frames, two zones each, with a model
// that knows only red and blue, keeping the frames it is unsure of in an
// inbox (with its camera and zones); four kept items are learned as
// "green" through the model's store, from their features, as serve's
// inbox learn does (appended to the journal); the running watch picks up
// the new version without a restart and answers green from then on.
// Every frame is classified (frame numbers without a gap, no error),
// both zones of a frame by the same model version, versions never go
// back, and before the switch no frame was green.
func TestReloadLearnFromInbox(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cam.flycl")
	ctx := context.Background()
	st, err := store.Open(ctx, path, &store.Options{Journal: true, Checkpoints: store.Checkpoints{Entries: 100}, Command: t.Name(),
		Create: func() (*deploy.Model, error) {
			return deploy.New(flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{0.01, 0.1, 1}}, 3, nil, nil)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	learn := func(x []float32, class string) {
		t.Helper()
		names := make([]string, len(x)/3)
		for i := range names {
			names[i] = class
		}
		err := st.Update(ctx, func(m *deploy.Model) (store.Change, error) {
			before := store.PriorOf(m)
			if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
				return store.Change{}, err
			}
			return store.Change{Entry: store.LearnEntry(m.Model.Version(), before, x, names, 3, deploy.LearnOptions{})}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	learn(colourSamples([3]float32{0.9, 0.1, 0.1}, 6), "red")
	learn(colourSamples([3]float32{0.1, 0.1, 0.9}, 6), "blue")
	if err := st.Checkpoint(); err != nil {
		t.Fatal(err)
	}

	f, err := store.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Snapshot.Predictor()
	v0 := p.Version()
	rl := NewReloading(&ModelClassifier{Extractor: meanExtractor{}, Predictor: p, Top: 2})
	ib, err := inbox.Open(filepath.Join(dir, "inbox"), inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	// a policy that keeps every answer less than certain: which frames
	// are doubtful is then the test's choice (TestPolicy tests the policy)
	k := &Keeper{Inbox: ib, Policy: inbox.Policy{Probability: 1, Margin: 10}, Camera: "drive", Every: 3, Log: quiet()}
	fw := &FileWatcher{Path: path, Interval: 10 * time.Millisecond, Into: rl, Unknown: "off", Log: quiet()}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go fw.Run(rctx)
	var out lockedBuffer
	zones := []Zone{{Name: "left", X: 0, Y: 0, W: 4, H: 6}, {Name: "right", X: 4, Y: 0, W: 4, H: 6}}
	runErr := make(chan error, 1)
	go func() {
		_, err := Run(rctx, Config{Source: &paced{colour: [3]float64{30, 220, 40}, every: 3 * time.Millisecond}, Classify: rl,
			Zones: zones, Out: &out, Inbox: k, Debounce: 1, Log: quiet()})
		runErr <- err
	}()
	// No time limits of its own: a step that never completes fails at go
	// test's -timeout.
	for {
		if n, _ := ib.Len(); n >= 4 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// the inbox learn: the kept items' features, learned as green
	items := ib.List()[:4]
	var x []float32
	for _, it := range items {
		if it.Camera != "drive" || (it.Zone != "left" && it.Zone != "right") || it.Guess == "green" || it.ModelVersion != v0 {
			t.Fatalf("kept item %+v: want camera drive, zone left or right, a guess of version %d that is not green", it, v0)
		}
		f, err := ib.Features(it.ID)
		if err != nil {
			t.Fatal(err)
		}
		x = append(x, f...)
	}
	learn(x, "green")
	ib.Remove(ids(items)...)
	var v1 uint64
	st.View(func(m *deploy.Model) error { v1 = m.Model.Version(); return nil })
	// until 20 more frames were answered green by the new version
	var frames []FrameLine
	for {
		frames, _ = lines(t, out.Bytes())
		green := 0
		for _, fl := range frames {
			if fl.ModelVersion == v1 && fl.Answer == "green" {
				green++
			}
		}
		if green >= 40 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	frames, _ = lines(t, out.Bytes())
	if reloads, failed := fw.Reloads(); reloads != 1 || failed != 0 {
		t.Fatalf("%d reloads, %d failed; want 1 and 0", reloads, failed)
	}
	switched := false
	for i := 0; i+1 < len(frames); i += 2 {
		l, r := frames[i], frames[i+1]
		if l.Frame != i/2 || r.Frame != i/2 || l.Zone != "left" || r.Zone != "right" {
			t.Fatalf("lines %d, %d are frame %d %s and %d %s: want frame %d left and right (no frame lost)", i, i+1, l.Frame, l.Zone, r.Frame, r.Zone, i/2)
		}
		if l.ModelVersion != r.ModelVersion || (l.ModelVersion != v0 && l.ModelVersion != v1) {
			t.Fatalf("frame %d: zones answered by versions %d and %d (want one of %d, %d for both)", l.Frame, l.ModelVersion, r.ModelVersion, v0, v1)
		}
		if switched && l.ModelVersion == v0 {
			t.Fatalf("frame %d went back to version %d", l.Frame, v0)
		}
		switched = l.ModelVersion == v1
		for _, z := range []FrameLine{l, r} {
			if (z.Answer == "green") != switched {
				t.Fatalf("frame %d zone %s: version %d answered %q", z.Frame, z.Zone, z.ModelVersion, z.Answer)
			}
		}
	}
	if !switched {
		t.Fatal("never switched")
	}
	k.Close()
	if s := k.Stats(); s.Kept < 4 || s.Failed != 0 {
		t.Fatalf("keeper %+v", s)
	}
}

// ids are the IDs of items.
func ids(items []inbox.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}
