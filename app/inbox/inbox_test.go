package inbox

import (
	"bytes"
	"errors"
	"fmt"
	"image/jpeg"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

// clock returns a Now that advances one second per call from a fixed
// time, so that sidecars (their time and ID) have the same length.
func clock() func() time.Time {
	t := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func open(t *testing.T, dir string, o Options) *Inbox {
	t.Helper()
	if o.Now == nil {
		o.Now = clock()
	}
	b, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// entry is a kept feature vector of d values i, i+1, ...
func entry(i, d int) Entry {
	x := make([]float32, d)
	for j := range x {
		x[j] = float32(i) + float32(j)/8
	}
	return Entry{ModelVersion: uint64(i), Guess: fmt.Sprintf("class%d", i%3), Top: []Score{{fmt.Sprintf("class%d", i%3), 0.4}, {"other", 0.3}},
		Why: LowMargin, Features: x}
}

// testImage is a w×h image with a gradient.
func testImage(w, h int) *imageio.RGB {
	im := imageio.NewRGB(w, h)
	for y := range h {
		for x := range w {
			i := 3 * (y*w + x)
			im.Pix[i], im.Pix[i+1], im.Pix[i+2] = uint8(x*255/max(w-1, 1)), uint8(y*255/max(h-1, 1)), 128
		}
	}
	return im
}

// diskBytes sums the sizes of the files under the items' folders, and
// counts the item folders: the truth the index must agree with.
func diskBytes(t *testing.T, dir string) (items int, bytes int64) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		items++
		filepath.WalkDir(filepath.Join(dir, e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				st, _ := d.Info()
				bytes += st.Size()
			}
			return err
		})
	}
	return items, bytes
}

func ids(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestInboxBounds: the inbox never holds more than MaxItems items or
// MaxBytes bytes, drops the oldest first, and its index agrees with the
// files on disk.
func TestInboxBounds(t *testing.T) {
	const d = 16
	// the size of one item, measured by adding it to an unbounded inbox
	probe := open(t, t.TempDir(), Options{})
	one, _, err := probe.Add(entry(1, d))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		opt      Options
		add      int
		wantKeep int
	}{
		{"count", Options{MaxItems: 3}, 7, 3},
		{"bytes", Options{MaxBytes: 2*one.Bytes + one.Bytes/2}, 6, 2},
		{"both, count tighter", Options{MaxItems: 2, MaxBytes: 4 * one.Bytes}, 5, 2},
		{"both, bytes tighter", Options{MaxItems: 4, MaxBytes: 3 * one.Bytes}, 5, 3},
		{"room for all", Options{MaxItems: 10}, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := open(t, dir, tc.opt)
			var added []string
			var sizes []int64
			var dropped []string
			for i := range tc.add {
				it, dr, err := b.Add(entry(i, d))
				if err != nil {
					t.Fatal(err)
				}
				added = append(added, it.ID)
				sizes = append(sizes, it.Bytes)
				dropped = append(dropped, dr...)
				n, by := b.Len()
				if n > b.opt.MaxItems || by > b.opt.MaxBytes {
					t.Fatalf("after %d adds: %d items, %d bytes; bounds %d, %d", i+1, n, by, b.opt.MaxItems, b.opt.MaxBytes)
				}
				// brute force: the longest run of the newest items that fits
				keep, sum := 0, int64(0)
				for j := i; j >= 0 && keep < b.opt.MaxItems && sum+sizes[j] <= b.opt.MaxBytes; j-- {
					keep++
					sum += sizes[j]
				}
				want := slices.Clone(added[i+1-keep:])
				slices.Reverse(want) // newest first
				if got := ids(b.List()); !reflect.DeepEqual(got, want) {
					t.Fatalf("after %d adds: kept %v, want the newest that fit: %v", i+1, got, want)
				}
				if !slices.Equal(dropped, added[:i+1-keep]) {
					t.Fatalf("after %d adds: dropped %v, want the oldest first: %v", i+1, dropped, added[:i+1-keep])
				}
			}
			n, by := b.Len()
			dn, dby := diskBytes(t, dir)
			if n != dn || by != dby || n != tc.wantKeep {
				t.Fatalf("index: %d items, %d bytes; disk: %d item folders, %d bytes; want %d items", n, by, dn, dby, tc.wantKeep)
			}
		})
	}
	t.Run("larger than the inbox", func(t *testing.T) {
		b := open(t, t.TempDir(), Options{MaxBytes: one.Bytes - 1})
		if _, _, err := b.Add(entry(1, d)); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("an item of %d bytes in an inbox of %d: %v, want ErrTooLarge", one.Bytes, one.Bytes-1, err)
		}
	})
	t.Run("bad entries", func(t *testing.T) {
		b := open(t, t.TempDir(), Options{})
		bad := entry(1, d)
		bad.Features[3] = float32(math.NaN())
		for name, e := range map[string]Entry{"no features": {Guess: "a", Why: Unknown}, "NaN": bad, "no guess": {Why: Unknown, Features: []float32{1}},
			"bad why": {Guess: "a", Why: "bored", Features: []float32{1}}} {
			if _, _, err := b.Add(e); err == nil {
				t.Errorf("%s: added", name)
			}
		}
		if n, _ := b.Len(); n != 0 {
			t.Fatalf("%d items after refused adds", n)
		}
		if dn, _ := diskBytes(t, b.Dir()); dn != 0 {
			t.Fatalf("%d folders left by refused adds", dn)
		}
	})
}

// TestInboxRestart: Open rebuilds the same index from the folder, the
// stored features are bit-identical, the image is the downscaled JPEG;
// a closed inbox refuses.
func TestInboxRestart(t *testing.T) {
	dir := t.TempDir()
	now := clock()
	b, err := Open(dir, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	p := 0.25
	withImage := entry(7, 12)
	withImage.Image, withImage.Probability, withImage.Why, withImage.Unknown = testImage(640, 480), &p, Unknown, true
	var feats [][]float32
	for i, e := range []Entry{entry(1, 12), withImage, entry(3, 12)} {
		if _, _, err := b.Add(e); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
		feats = append(feats, e.Features)
	}
	before := b.List()
	img, err := b.Image(before[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, _, err := b.Add(entry(4, 12)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v, want ErrClosed", err)
	}

	b2 := open(t, dir, Options{Now: now})
	after := b2.List()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("index after a restart:\n%+v\nbefore:\n%+v", after, before)
	}
	for i, it := range after {
		x, err := b2.Features(it.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := feats[len(feats)-1-i]
		if !slices.Equal(x, want) {
			t.Fatalf("item %s: features %v, stored %v", it.ID, x, want)
		}
	}
	img2, err := b2.Image(after[1].ID)
	if err != nil || !bytes.Equal(img, img2) {
		t.Fatalf("image after a restart differs (%v)", err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(img2))
	if err != nil || cfg.Width != 256 || cfg.Height != 192 || after[1].Width != 256 || after[1].Height != 192 {
		t.Fatalf("stored image %d×%d (item says %d×%d, %v), want 640×480 downscaled to 256×192", cfg.Width, cfg.Height, after[1].Width, after[1].Height, err)
	}
	if _, err := b2.Image(after[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("image of a feature-only item: %v, want ErrNotFound", err)
	}
	// new IDs stay above the old ones even when the clock went back
	it, _, err := b2.Add(Entry{Guess: "x", Why: Unknown, Features: []float32{1}})
	if err != nil || it.ID <= after[0].ID {
		t.Fatalf("new item %q after %q (%v): IDs must grow", it.ID, after[0].ID, err)
	}
}

// TestInboxCorrupt: Open skips, with a log line naming it, an item whose
// sidecar does not parse or whose files disagree with it, removes the
// folder a crash left without a sidecar, and keeps the rest.
func TestInboxCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		// skipped: left in place and logged; else removed as incomplete
		skipped bool
	}{
		{"garbage sidecar", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, sidecarName), []byte("{\"format\": \"flycl-in"))
		}, true},
		{"sidecar of another item", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, sidecarName))
			write(t, filepath.Join(dir, sidecarName), bytes.Replace(b, []byte(filepath.Base(dir)), []byte("00000000000000000001"), 1))
		}, true},
		{"features flipped", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, featuresName))
			b[5] ^= 0x40
			write(t, filepath.Join(dir, featuresName), b)
		}, true},
		{"features truncated", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, featuresName))
			write(t, filepath.Join(dir, featuresName), b[:len(b)-4])
		}, true},
		{"image missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, imageName)) }, true},
		{"crash before the sidecar", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, sidecarName)) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b, err := Open(dir, Options{Now: clock()})
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for i := range 3 {
				e := entry(i, 8)
				e.Image = testImage(20, 10)
				it, _, err := b.Add(e)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, it.ID)
			}
			b.Close()
			victim := all[1]
			tc.damage(t, filepath.Join(dir, victim))
			var log bytes.Buffer
			b2 := open(t, dir, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if got, want := ids(b2.List()), []string{all[2], all[0]}; !reflect.DeepEqual(got, want) {
				t.Fatalf("items %v, want %v", got, want)
			}
			_, statErr := os.Stat(filepath.Join(dir, victim))
			if tc.skipped {
				if !strings.Contains(log.String(), "skipping") || !strings.Contains(log.String(), filepath.Join(dir, victim, sidecarName)) {
					t.Fatalf("no log line names the skipped sidecar: %q", log.String())
				}
				if statErr != nil {
					t.Fatalf("the skipped item was removed: %v", statErr)
				}
			} else if !errors.Is(statErr, fs.ErrNotExist) {
				t.Fatalf("the incomplete item is still there: %v", statErr)
			}
			if _, err := b2.Features(victim); !errors.Is(err, ErrNotFound) {
				t.Fatalf("features of the victim: %v, want ErrNotFound", err)
			}
			if _, err := b2.Remove(victim); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestThumbnail: a downscale by a whole factor is the rounded mean of
// each block of source pixels; the long side is bounded and the aspect
// kept; a small image is kept as it is.
func TestThumbnail(t *testing.T) {
	im := testImage(8, 6)
	for i := range im.Pix {
		im.Pix[i] = uint8((i * 37) % 251)
	}
	th := Thumbnail(im, 4) // 8×6 → 4×3: 2×2 blocks
	if th.Rect.Dx() != 4 || th.Rect.Dy() != 3 {
		t.Fatalf("%v, want 4×3", th.Rect)
	}
	for y := range 3 {
		for x := range 4 {
			for c := range 3 {
				sum := 0
				for dy := range 2 {
					for dx := range 2 {
						sum += int(im.Pix[3*((2*y+dy)*8+2*x+dx)+c])
					}
				}
				want := uint8((sum + 2) / 4)
				if got := th.Pix[th.PixOffset(x, y)+c]; got != want {
					t.Fatalf("(%d,%d) channel %d: %d, want the block mean %d", x, y, c, got, want)
				}
			}
		}
	}
	for _, tc := range []struct{ w, h, side, ww, wh int }{{1000, 10, 256, 256, 2}, {10, 1000, 256, 2, 256}, {3000, 1, 256, 256, 1}, {100, 80, 256, 100, 80}} {
		th := Thumbnail(testImage(tc.w, tc.h), tc.side)
		if th.Rect.Dx() != tc.ww || th.Rect.Dy() != tc.wh {
			t.Errorf("%d×%d to %d: %v, want %d×%d", tc.w, tc.h, tc.side, th.Rect, tc.ww, tc.wh)
		}
	}
	small := testImage(5, 3)
	th = Thumbnail(small, 256)
	for i := range 15 {
		if !bytes.Equal(th.Pix[4*i:4*i+3], small.Pix[3*i:3*i+3]) {
			t.Fatalf("pixel %d of a small image changed", i)
		}
	}
}

// TestPolicy: which predictions are kept, and why.
func TestPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       Policy
		unknown bool
		prob    float64
		hasProb bool
		row     []float32
		want    Reason
	}{
		{"unknown wins", Policy{}, true, 0.99, true, []float32{1, 0}, Unknown},
		{"sure", Policy{}, false, 0.9, true, []float32{0.2, 0.19}, ""},
		{"unsure", Policy{}, false, 0.4, true, []float32{1, 0}, LowProbability},
		{"own threshold", Policy{Probability: 0.95}, false, 0.9, true, []float32{1, 0}, LowProbability},
		{"no probability, close", Policy{}, false, 0, false, []float32{0.1, 0.5, 0.4}, LowMargin},
		{"no probability, clear", Policy{}, false, 0, false, []float32{0.9, 0.1, 0.2}, ""},
		{"no probability, own margin", Policy{Margin: 0.9}, false, 0, false, []float32{0.9, 0.1, 0.2}, LowMargin},
		{"one class", Policy{}, false, 0, false, []float32{0.01}, ""},
		{"ties first", Policy{}, false, 0, false, []float32{0.7, 0.7}, LowMargin},
	} {
		why, ok := tc.p.Keep(tc.unknown, tc.prob, tc.hasProb, tc.row)
		if why != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %q %v, want %q", tc.name, why, ok, tc.want)
		}
	}
	for _, bad := range []Policy{{Probability: -0.1}, {Probability: 1.5}, {Probability: math.NaN()}, {Margin: -1}, {Margin: math.Inf(1)}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestInboxShared: two Inboxes of one folder (two processes: flycl watch
// keeps, flycl serve lists and learns) see each other's additions and
// removals, and the bounds hold over both: adders racing from both never
// leave more than MaxItems items, the index agrees with the disk, and no
// two items share an ID. The camera and zone of an entry come back.
func TestInboxShared(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, Options{MaxItems: 6})
	b := open(t, dir, Options{MaxItems: 6})
	e := entry(1, 8)
	e.Camera, e.Zone, e.Why = "drive", "gate", Change
	it, _, err := a.Add(e)
	if err != nil {
		t.Fatal(err)
	}
	got := b.List()
	if len(got) != 1 || !reflect.DeepEqual(got[0], it) || got[0].Camera != "drive" || got[0].Zone != "gate" || got[0].Why != Change {
		t.Fatalf("the second inbox lists %+v, want %+v", got, it)
	}
	if x, err := b.Features(it.ID); err != nil || !slices.Equal(x, e.Features) {
		t.Fatalf("features through the second inbox: %v %v", x, err)
	}
	if rm, err := b.Remove(it.ID); err != nil || len(rm) != 1 {
		t.Fatalf("remove through the second inbox: %v %v", rm, err)
	}
	if n, by := a.Len(); n != 0 || by != 0 {
		t.Fatalf("the first inbox counts %d items, %d bytes after the other removed its only one", n, by)
	}
	const per = 20
	errc := make(chan error, 2)
	for k, ib := range []*Inbox{a, b} {
		go func() {
			for i := range per {
				if _, _, err := ib.Add(entry(100*k+i, 8)); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range 2 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	la, lb := a.List(), b.List()
	if len(la) != 6 || !reflect.DeepEqual(la, lb) {
		t.Fatalf("after racing adds the inboxes list %d and %d items (%v, %v), want the same 6", len(la), len(lb), ids(la), ids(lb))
	}
	n, by := diskBytes(t, dir)
	if an, ab := a.Len(); n != 6 || an != n || ab != by {
		t.Fatalf("disk holds %d items of %d bytes, the index %d of %d", n, by, an, ab)
	}
}

// A folder named with 20 digits past the largest int64 (made by hand, or
// by another program) is no item and does not move the next ID: items
// added at one instant still get growing IDs, each larger than the last,
// and all of them are listed. (It used to set the last ID to the largest
// int64, so the next was the time again: a second add at that instant
// found its folder taken.)
func TestInboxIDPastInt64(t *testing.T) {
	for _, name := range []string{"99999999999999999999", "09223372036854775808"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			// with a sidecar (not valid): a folder without one would be
			// removed as a write a crash interrupted
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, sidecarName), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			b := open(t, dir, Options{Now: func() time.Time { return at }})
			var ids []string
			for i := range 3 {
				it, _, err := b.Add(entry(i, 4))
				if err != nil {
					t.Fatalf("add %d: %v", i, err)
				}
				ids = append(ids, it.ID)
				b.List() // reads the folder again
			}
			want := []string{fmt.Sprintf("%020d", at.UnixNano()), fmt.Sprintf("%020d", at.UnixNano()+1), fmt.Sprintf("%020d", at.UnixNano()+2)}
			if !slices.Equal(ids, want) {
				t.Fatalf("IDs %v, want %v", ids, want)
			}
			if n := len(b.List()); n != 3 {
				t.Fatalf("%d items listed, want 3", n)
			}
		})
	}
}
