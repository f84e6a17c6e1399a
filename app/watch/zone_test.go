package watch

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

// halves is an 8×6 frame whose left four columns are one colour and
// right four another.
func halves(left, right string) *imageio.RGB {
	img := imageio.NewRGB(8, 6)
	for y := range 6 {
		for x := range 8 {
			c := colours[left]
			if x >= 4 {
				c = colours[right]
			}
			i := 3 * (y*8 + x)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2] = uint8(c[0]), uint8(c[1]), uint8(c[2])
		}
	}
	return img
}

// TestRunZones: two zones (the left half in fractions, the right half in
// pixels) of frames whose halves change at different times are each
// classified on their own half, with their own debouncer (a one-frame
// flicker on the right is not an event) and their own events.
func TestRunZones(t *testing.T) {
	left := repeat(6, "red", "green")
	right := append(repeat(3, "blue"), "red", "blue", "blue")
	right = append(right, repeat(6, "white")...)
	var b []byte
	for i := range left {
		b = append(b, ppm(halves(left[i], right[i]))...)
	}
	zones, err := ParseZones([]string{"left=0,0,0.5,1.0", "right=4,0,4,6"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ev := &sink{}
	cl := &colourClassifier{}
	st, err := Run(context.Background(), Config{Source: &memSource{segments: [][]byte{b}}, Classify: cl, Zones: zones,
		Out: &out, Events: ev, Debounce: 2, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	frames, events := lines(t, out.Bytes())
	if len(frames) != 2*len(left) {
		t.Fatalf("%d frame lines, want %d", len(frames), 2*len(left))
	}
	for i := range left {
		l, r := frames[2*i], frames[2*i+1]
		if l.Frame != i || r.Frame != i || l.Zone != "left" || r.Zone != "right" || l.Answer != left[i] || r.Answer != right[i] {
			t.Fatalf("frame %d: lines %+v / %+v, want left %s, right %s", i, l, r, left[i], right[i])
		}
	}
	for _, sz := range cl.sizes {
		if sz != [2]int{4, 6} {
			t.Fatalf("the classifier was given a %d×%d image, want the 4×6 halves", sz[0], sz[1])
		}
	}
	want := []Event{{ID: 1, Zone: "left", Class: "red", Frame: 1, Since: 0}, {ID: 2, Zone: "right", Class: "blue", Frame: 1, Since: 0},
		{ID: 3, Zone: "left", Previous: "red", Class: "green", Frame: 7, Since: 6},
		{ID: 4, Zone: "right", Previous: "blue", Class: "white", Frame: 7, Since: 6}}
	var got []Event
	for _, e := range events {
		e.Event.Time, e.Event.Source, e.Event.Score = time.Time{}, "", 0
		got = append(got, e.Event)
	}
	if !slices.Equal(got, want) || len(ev.events) != len(want) {
		t.Fatalf("events %+v (%d sent), want %+v", got, len(ev.events), want)
	}
	if st.Frames != len(left) || st.Classified != len(left) || st.Events != len(want) {
		t.Fatalf("stats %+v", st)
	}
}

// TestRunZoneOutside: a zone reaching outside the frame ends Run with an
// error naming it.
func TestRunZoneOutside(t *testing.T) {
	zones, err := ParseZones([]string{"ok=0,0,4,6", "door=4,0,5,6"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Config{Source: &memSource{segments: [][]byte{ppm(halves("red", "blue"))}},
		Classify: &colourClassifier{}, Zones: zones, Log: quiet()})
	if !errors.Is(err, ErrZone) || !strings.Contains(err.Error(), `"door"`) || !strings.Contains(err.Error(), "8×6") {
		t.Fatalf("err %v, want ErrZone naming door and the frame's size", err)
	}
}

// TestCropGeometry checks Zone.Rect and Crop against a brute force:
// a pixel belongs to a fractional zone when its centre lies in
// (X·w, (X+W)·w] × (Y·h, (Y+H)·h], and the crop's every pixel equals
// the frame's pixel it was taken from.
func TestCropGeometry(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var dst *imageio.RGB
	for trial := range 300 {
		w, h := 1+rng.IntN(40), 1+rng.IntN(40)
		src := imageio.NewRGB(w, h)
		for i := range src.Pix {
			src.Pix[i] = uint8(rng.IntN(256))
		}
		var z Zone
		if trial%2 == 0 {
			x, y := rng.IntN(w), rng.IntN(h)
			z = Zone{Name: "z", X: float64(x), Y: float64(y), W: float64(1 + rng.IntN(w-x)), H: float64(1 + rng.IntN(h-y))}
		} else {
			x, y := rng.Float64(), rng.Float64()
			z = Zone{Name: "z", Fraction: true, X: x, Y: y, W: rng.Float64() * (1 - x), H: rng.Float64() * (1 - y)}
		}
		r, err := z.Rect(w, h)
		// brute force: the pixels of the frame in the zone
		var in image.Rectangle
		first := true
		for py := range h {
			for px := range w {
				var inside bool
				if z.Fraction {
					cx, cy := float64(px)+0.5, float64(py)+0.5
					inside = cx > z.X*float64(w) && cx <= (z.X+z.W)*float64(w) && cy > z.Y*float64(h) && cy <= (z.Y+z.H)*float64(h)
				} else {
					inside = float64(px) >= z.X && float64(px) < z.X+z.W && float64(py) >= z.Y && float64(py) < z.Y+z.H
				}
				if inside {
					p := image.Rect(px, py, px+1, py+1)
					if first {
						in, first = p, false
					} else {
						in = in.Union(p)
					}
				}
			}
		}
		if first { // no pixel: Rect must refuse
			if !errors.Is(err, ErrZone) {
				t.Fatalf("trial %d: %v of %d×%d covers no pixel, Rect gave %v, %v", trial, z, w, h, r, err)
			}
			continue
		}
		if err != nil || r != in {
			t.Fatalf("trial %d: %v of %d×%d: Rect %v, %v; brute force %v", trial, z, w, h, r, err, in)
		}
		dst = Crop(dst, src, r)
		if dst.W != r.Dx() || dst.H != r.Dy() || len(dst.Pix) != 3*dst.W*dst.H {
			t.Fatalf("trial %d: crop %d×%d (%d bytes) of %v", trial, dst.W, dst.H, len(dst.Pix), r)
		}
		for y := range dst.H {
			for x := range dst.W {
				r1, g1, b1 := dst.At(x, y)
				r2, g2, b2 := src.At(r.Min.X+x, r.Min.Y+y)
				if r1 != r2 || g1 != g2 || b1 != b2 {
					t.Fatalf("trial %d: crop pixel (%d,%d) differs from the frame's (%d,%d)", trial, x, y, r.Min.X+x, r.Min.Y+y)
				}
			}
		}
	}
}

func TestParseZones(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []Zone // nil: an error
		msg  string // in the error
	}{
		{in: []string{"door=10,20,30,40"}, want: []Zone{{Name: "door", X: 10, Y: 20, W: 30, H: 40}}},
		{in: []string{"left=0,0,0.5,1"}, want: []Zone{{Name: "left", W: 0.5, H: 1, Fraction: true}}},
		{in: []string{"a=0.25,0.25,.5,0.75", "B_2-x=1,1,1,1"}, want: []Zone{{Name: "a", X: 0.25, Y: 0.25, W: 0.5, H: 0.75, Fraction: true}, {Name: "B_2-x", X: 1, Y: 1, W: 1, H: 1}}},
		{in: []string{"door"}, msg: "NAME=X,Y,W,H"},
		{in: []string{"=1,2,3,4"}, msg: "name"},
		{in: []string{"a/b=1,2,3,4"}, msg: "name"},
		{in: []string{"a+=1,2,3,4"}, msg: "name"},
		{in: []string{"door=1,2,3"}, msg: "four numbers"},
		{in: []string{"door=1,2,3,4,5"}, msg: "four numbers"},
		{in: []string{"door=1,2,x,4"}, msg: `"x"`},
		{in: []string{"door=-1,2,3,4"}, msg: `"-1"`},
		{in: []string{"door=0,0,0,4"}, msg: "positive"},
		{in: []string{"door=0.5,0,1.5,1"}, msg: `"1.5"`},
		{in: []string{"door=0.5,0,0.6,1"}, msg: "at most 1"},
		{in: []string{"door=0,0.5,1,0.6"}, msg: "at most 1"},
		{in: []string{"door=0,0,0.5,NaN"}, msg: "fraction"},
		{in: []string{"door=0,0,0.5,0"}, msg: "positive"},
		{in: []string{"door=1,2,3,4", "door=5,6,7,8"}, msg: "two zones"},
	} {
		got, err := ParseZones(tc.in)
		if tc.want == nil {
			if !errors.Is(err, ErrZone) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%q: err %v, want ErrZone with %q", tc.in, err, tc.msg)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		for _, z := range got { // String reads back as the same zone
			if back, err := ParseZone(z.String()); err != nil || back != z {
				t.Errorf("%q: %v reads back as %+v, %v", tc.in, z, back, err)
			}
		}
	}
}

// FuzzParseZone: any string gives a zone or ErrZone, never a panic; a
// zone it gives fits in [0,1] (fractions) and reads back from its String.
func FuzzParseZone(f *testing.F) {
	for _, s := range []string{"door=10,20,30,40", "left=0,0,0.5,1", "a=.1,.2,.3,.4", "x=1e-1,0,0.5,1", "b=1,2,3", "=", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		z, err := ParseZone(s)
		if err != nil {
			if !errors.Is(err, ErrZone) {
				t.Fatalf("%q: error %v not ErrZone", s, err)
			}
			return
		}
		if z.Fraction && (z.X+z.W > 1+1e-9 || z.Y+z.H > 1+1e-9) {
			t.Fatalf("%q: %+v leaves the frame", s, z)
		}
		if _, err := z.Rect(640, 480); err != nil && !errors.Is(err, ErrZone) {
			t.Fatalf("%q: Rect: %v", s, err)
		}
	})
}

// redUnknown is colourClassifier with red frames marked unknown.
type redUnknown struct{ colourClassifier }

func (c *redUnknown) Classify(ctx context.Context, img *imageio.RGB) (Prediction, error) {
	p, err := c.colourClassifier.Classify(ctx, img)
	p.Unknown = p.Answer == "red"
	return p, err
}

// TestRunZonesDoubtful: a zone's doubtful crops are saved in a folder
// named after it, each the zone's crop (4×6), each zone with its own bounds.
func TestRunZonesDoubtful(t *testing.T) {
	left := []string{"red", "red", "red", "green", "green"}
	right := []string{"blue", "red", "blue", "blue", "red"}
	var b []byte
	for i := range left {
		b = append(b, ppm(halves(left[i], right[i]))...)
	}
	zones, err := ParseZones([]string{"left=0,0,4,6", "right=4,0,4,6"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := Run(context.Background(), Config{Source: &memSource{segments: [][]byte{b}}, Classify: &redUnknown{}, Zones: zones,
		Doubtful: &Saver{Dir: dir, Every: 1}, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	for zone, want := range map[string][]string{"left": {"frame-000000000-red.jpg", "frame-000000001-red.jpg", "frame-000000002-red.jpg"},
		"right": {"frame-000000001-red.jpg", "frame-000000004-red.jpg"}} {
		ents, err := os.ReadDir(filepath.Join(dir, zone))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
			f, err := os.Open(filepath.Join(dir, zone, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := jpeg.DecodeConfig(f)
			f.Close()
			if err != nil || cfg.Width != 4 || cfg.Height != 6 {
				t.Fatalf("%s/%s: %d×%d, %v; want the 4×6 crop", zone, e.Name(), cfg.Width, cfg.Height, err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("zone %s saved %v, want %v", zone, got, want)
		}
	}
	if st.Saved != 5 {
		t.Fatalf("stats saved %d, want 5", st.Saved)
	}
}
