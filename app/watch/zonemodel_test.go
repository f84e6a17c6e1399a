package watch

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/vision/imageio"
)

// drawn is a size×size picture of pattern (internal/testimages) as RGB.
func drawn(t *testing.T, pattern string, size int, r *rand.Rand) *imageio.RGB {
	t.Helper()
	img, err := testimages.Draw(pattern, size, r)
	if err != nil {
		t.Fatal(err)
	}
	out := imageio.NewRGB(size, size)
	for y := range size {
		for x := range size {
			c := img.NRGBAAt(x, y)
			i := 3 * (y*size + x)
			out.Pix[i], out.Pix[i+1], out.Pix[i+2] = c.R, c.G, c.B
		}
	}
	return out
}

// sideBySide is a frame of a and b side by side (equal heights).
func sideBySide(a, b *imageio.RGB) *imageio.RGB {
	out := imageio.NewRGB(a.W+b.W, a.H)
	for y := range a.H {
		copy(out.Pix[3*y*out.W:], a.Pix[3*y*a.W:3*(y+1)*a.W])
		copy(out.Pix[3*(y*out.W+a.W):], b.Pix[3*y*b.W:3*(y+1)*b.W])
	}
	return out
}

// learnDrawn teaches m n drawn pictures of each pattern of classes
// (class name → pattern), through ex's features, one learn per class.
func learnDrawn(t *testing.T, m *deploy.Model, classes [][2]string, n int, r *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	for _, c := range classes {
		var imgs []*imageio.RGB
		names := make([]string, n)
		for i := range n {
			imgs = append(imgs, drawn(t, c[1], 32, r))
			names[i] = c[0]
		}
		x, err := meanExtractor{}.Features(ctx, imgs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// cycling is a file-like source that gives its frames in turn, one every
// few milliseconds, until its context ends.
type cycling struct {
	frames []*imageio.RGB
	every  time.Duration
}

func (c *cycling) Live() bool     { return false }
func (c *cycling) String() string { return "cycling" }
func (c *cycling) Open(ctx context.Context) (Stream, error) {
	return &cyclingStream{c: c, ctx: ctx}, nil
}

type cyclingStream struct {
	c   *cycling
	ctx context.Context
	n   int
}

func (s *cyclingStream) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	select {
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	case <-time.After(s.c.every):
	}
	f := s.c.frames[s.n%len(s.c.frames)]
	s.n++
	if dst.W != f.W || dst.H != f.H {
		*dst = *imageio.NewRGB(f.W, f.H)
	}
	copy(dst.Pix, f.Pix)
	return dst, nil
}

func (s *cyclingStream) Close() error { return nil }

// TestRunZoneModels: three zones of a stream, "gate" (the left half)
// classified by the stream's model (a gate model: open or closed) and
// "drive" and "drive2" (both the right half) by a zone model of their own
// (a drive model: car or empty), the two models learned in the test from
// drawn pictures. Every zone's every frame line answers its own model's
// class for the picture drawn in its half (with the stream's model alone,
// the right half would be answered open or closed), with its own model's
// version, and so do the events. A new version of the drive model's file
// is picked up by the drive zones alone: the gate zone's version never
// changes, and the two drive zones, sharing one classifier, are answered
// by one version in every frame.
func TestRunZoneModels(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	newModel := func() *deploy.Model {
		m, err := deploy.New(flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{0.01, 0.1, 1}}, 3, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	gate, drive := newModel(), newModel()
	learnDrawn(t, gate, [][2]string{{"open", "discs"}, {"closed", "stripes"}, {"open", "discs"}}, 8, r)
	learnDrawn(t, drive, [][2]string{{"car", "checks"}, {"empty", "rings"}}, 8, r)
	gatePath, drivePath := filepath.Join(dir, "gate.flycl"), filepath.Join(dir, "drive.flycl")
	for _, s := range []struct {
		m    *deploy.Model
		path string
	}{{gate, gatePath}, {drive, drivePath}} {
		if err := store.Save(context.Background(), s.path, s.m); err != nil {
			t.Fatal(err)
		}
	}
	load := func(path string) *ModelClassifier {
		f, err := store.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return &ModelClassifier{Extractor: meanExtractor{}, Predictor: f.Snapshot.Predictor(), Top: 2}
	}
	rlGate, rlDrive := NewReloading(load(gatePath)), NewReloading(load(drivePath))
	vGate, vDrive := gate.Model.Version(), drive.Model.Version()
	var vDrive2 uint64 // the drive model's next version (below)
	if vGate == vDrive {
		t.Fatalf("both models at version %d: the test cannot tell them apart", vGate)
	}

	// 24 frames: the left half discs (open) or stripes (closed), every 4
	// frames; the right half checks (car) or rings (empty), every 6
	type truth struct{ gate, drive string }
	var frames []*imageio.RGB
	var want []truth
	for k := range 24 {
		l, lw := "discs", "open"
		if k/4%2 == 1 {
			l, lw = "stripes", "closed"
		}
		rp, rw := "checks", "car"
		if k/6%2 == 1 {
			rp, rw = "rings", "empty"
		}
		frames = append(frames, sideBySide(drawn(t, l, 32, r), drawn(t, rp, 32, r)))
		want = append(want, truth{lw, rw})
	}
	zones, err := ParseZones([]string{"gate=0,0,32,32", "drive=32,0,32,32", "drive2=0.5,0,0.5,1.0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchers := map[string]*FileWatcher{
		"gate":  {Path: gatePath, Interval: 10 * time.Millisecond, Into: rlGate, Unknown: "off", Log: quiet()},
		"drive": {Path: drivePath, Interval: 10 * time.Millisecond, Into: rlDrive, Unknown: "off", Log: quiet()},
	}
	for _, w := range watchers {
		go w.Run(ctx)
	}
	var out lockedBuffer
	runErr := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Source: &cycling{frames: frames, every: 2 * time.Millisecond}, Classify: rlGate,
			Zones: zones, ZoneClassify: map[string]Classifier{"drive": rlDrive, "drive2": rlDrive}, Out: &out, Debounce: 1, Log: quiet()})
		runErr <- err
	}()
	// No time limits of its own: a step that never completes fails at go
	// test's -timeout; a drive line answered by another model fails at once.
	waitFrames := func(n int, version uint64) {
		for {
			fl, _ := lines(t, out.Bytes())
			c := 0
			for _, l := range fl {
				if l.Zone == "drive" && l.ModelVersion != vDrive && l.ModelVersion != vDrive2 {
					t.Fatalf("frame %d: the drive zone answered %q by version %d, not the drive model's", l.Frame, l.Answer, l.ModelVersion)
				}
				if l.Zone == "drive" && (version == 0 || l.ModelVersion == version) {
					c++
				}
			}
			if c >= n {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFrames(30, 0)
	// a new version of the drive model: more of the same pictures
	learnDrawn(t, drive, [][2]string{{"car", "checks"}, {"empty", "rings"}}, 4, r)
	if err := store.Save(context.Background(), drivePath, drive); err != nil {
		t.Fatal(err)
	}
	vDrive2 = drive.Model.Version()
	if vDrive2 == vDrive || vDrive2 == vGate {
		t.Fatalf("the drive model's new version %d is not new (gate %d, drive %d)", vDrive2, vGate, vDrive)
	}
	waitFrames(30, vDrive2)
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	fl, events := lines(t, out.Bytes())
	if n, _ := watchers["gate"].Reloads(); n != 0 {
		t.Fatalf("the gate model was reloaded %d times; its file never changed", n)
	}
	if n, failed := watchers["drive"].Reloads(); n != 1 || failed != 0 {
		t.Fatalf("the drive model: %d reloads, %d failed; want 1, 0", n, failed)
	}
	switched := false
	version := map[[2]int]uint64{} // frame, zone index → version
	for i := 0; i+2 < len(fl); i += 3 {
		g, d, d2 := fl[i], fl[i+1], fl[i+2]
		k := i / 3
		if g.Frame != k || d.Frame != k || d2.Frame != k || g.Zone != "gate" || d.Zone != "drive" || d2.Zone != "drive2" {
			t.Fatalf("lines %d to %d: frames %d %d %d, zones %s %s %s: want frame %d gate, drive, drive2", i, i+2, g.Frame, d.Frame, d2.Frame, g.Zone, d.Zone, d2.Zone, k)
		}
		w := want[k%len(want)]
		if g.Answer != w.gate || d.Answer != w.drive || d2.Answer != w.drive {
			t.Fatalf("frame %d: gate %q, drive %q, drive2 %q; want %q, %q, %q", k, g.Answer, d.Answer, d2.Answer, w.gate, w.drive, w.drive)
		}
		if g.ModelVersion != vGate {
			t.Fatalf("frame %d: the gate zone answered by version %d, want the gate model's %d", k, g.ModelVersion, vGate)
		}
		if d.ModelVersion != d2.ModelVersion || (d.ModelVersion != vDrive && d.ModelVersion != vDrive2) {
			t.Fatalf("frame %d: the drive zones answered by versions %d and %d, want one of %d, %d for both", k, d.ModelVersion, d2.ModelVersion, vDrive, vDrive2)
		}
		if switched && d.ModelVersion == vDrive {
			t.Fatalf("frame %d: the drive zones went back to version %d", k, vDrive)
		}
		switched = d.ModelVersion == vDrive2
		version[[2]int{k, 0}], version[[2]int{k, 1}], version[[2]int{k, 2}] = g.ModelVersion, d.ModelVersion, d2.ModelVersion
	}
	if !switched {
		t.Fatal("the drive zones never switched to the new version")
	}
	zi := map[string]int{"gate": 0, "drive": 1, "drive2": 2}
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.Zone] = true
		if v, ok := version[[2]int{e.Frame, zi[e.Zone]}]; !ok || e.ModelVersion != v {
			t.Fatalf("event %+v: model version %d, want its frame line's %d", e.Event, e.ModelVersion, v)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("events of zones %v, want all three", seen)
	}
}

// TestRunZoneClassifyUnknownZone: a classifier given to a zone that is
// not one of the zones is an error naming it, before any frame.
func TestRunZoneClassifyUnknownZone(t *testing.T) {
	zones, err := ParseZones([]string{"gate=0,0,4,6"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Config{Source: &memSource{segments: [][]byte{ppm(halves("red", "blue"))}},
		Classify: &colourClassifier{}, Zones: zones, ZoneClassify: map[string]Classifier{"door": &colourClassifier{}}, Log: quiet()})
	if !errors.Is(err, ErrZone) || !strings.Contains(err.Error(), `"door"`) {
		t.Fatalf("err %v, want ErrZone naming door", err)
	}
}

// TestRunZoneModelsInbox: the labelling inbox keeps the crops of the
// zones classified by the stream's model only (a label there learns into
// that model): with every answer doubtful, the zone with its own model
// has no item, the other zone has its items.
func TestRunZoneModelsInbox(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	newModel := func(classes [][2]string) *ModelClassifier {
		m, err := deploy.New(flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{0.01, 0.1, 1}}, 3, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		learnDrawn(t, m, classes, 6, r)
		return &ModelClassifier{Extractor: meanExtractor{}, Predictor: m.Model.Snapshot().Predictor(), Top: 2}
	}
	gate := newModel([][2]string{{"open", "discs"}, {"closed", "stripes"}})
	drive := newModel([][2]string{{"car", "checks"}, {"empty", "rings"}})
	var b []byte
	for range 6 {
		b = append(b, ppm(sideBySide(drawn(t, "discs", 32, r), drawn(t, "checks", 32, r)))...)
	}
	zones, err := ParseZones([]string{"gate=0,0,32,32", "drive=32,0,32,32"})
	if err != nil {
		t.Fatal(err)
	}
	ib, err := inbox.Open(filepath.Join(t.TempDir(), "inbox"), inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	k := &Keeper{Inbox: ib, Policy: inbox.Policy{Probability: 1, Margin: 1e9}, Camera: "yard", Every: 1, Log: quiet()}
	if _, err := Run(context.Background(), Config{Source: &memSource{segments: [][]byte{b}}, Classify: gate, Zones: zones,
		ZoneClassify: map[string]Classifier{"drive": drive}, Inbox: k, Debounce: 1, Log: quiet()}); err != nil {
		t.Fatal(err)
	}
	k.Close()
	items := ib.List()
	if len(items) != 6 {
		t.Fatalf("%d items kept, want the gate zone's 6", len(items))
	}
	for _, it := range items {
		if it.Zone != "gate" || (it.Guess != "open" && it.Guess != "closed") {
			t.Fatalf("kept %+v: want only the gate zone's crops, guessed by the gate model", it)
		}
	}
}
