package watch

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/imageio"
)

// timedSource is a memSource whose frames are fps apart in the stream.
type timedSource struct {
	memSource
	fps float64
}

func (s *timedSource) FrameTime(frame int) (time.Duration, bool) {
	return time.Duration(float64(frame) / s.fps * float64(time.Second)), true
}

// wantJPEG encodes the w×h rectangle at (x, y) of img, copied pixel by
// pixel, with the encoder and quality the Collector uses: a saved file
// must be these bytes exactly.
func wantJPEG(t *testing.T, img *imageio.RGB, x, y, w, h int) []byte {
	t.Helper()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for j := range h {
		for i := range w {
			p := ((y+j)*img.W + x + i) * 3
			o := out.PixOffset(i, j)
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = img.Pix[p], img.Pix[p+1], img.Pix[p+2], 255
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, out, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// listJPEG returns the names of the files in dir (not folders), sorted.
func listJPEG(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestCollect: a file read at 2 frames/s, collected every 3 s of stream
// time, saves frames 0, 6, 12 and 18 (times 0, 3, 6, 9 s of 20 frames),
// per zone in DIR/ZONE/ (or at DIR's top without zones), named so they
// sort by time, each the JPEG of its crop, whatever the classifier
// answered; with Max, the first Max files (all zones together) only.
func TestCollect(t *testing.T) {
	const n, fps = 20, 2.0
	var frames []*imageio.RGB
	var b []byte
	for i := range n {
		frames = append(frames, pattern(8, 6, i))
		b = append(b, ppm(frames[i])...)
	}
	files := map[int]string{
		0:  "000000000.000s-frame-000000000.jpg",
		6:  "000000003.000s-frame-000000006.jpg",
		12: "000000006.000s-frame-000000012.jpg",
		18: "000000009.000s-frame-000000018.jpg",
	}
	zones := []Zone{{Name: "left", X: 0, Y: 0, W: 4, H: 6}, {Name: "right", X: 4, Y: 1, W: 4, H: 5}}
	for _, c := range []struct {
		name  string
		zones []Zone
		max   int
		want  map[string][]int // zone folder → frames saved
	}{
		{"frames", nil, 0, map[string][]int{"": {0, 6, 12, 18}}},
		{"zones", zones, 0, map[string][]int{"left": {0, 6, 12, 18}, "right": {0, 6, 12, 18}}},
		{"zones, max 5", zones, 5, map[string][]int{"left": {0, 6, 12}, "right": {0, 6}}},
		{"frames, max 2", nil, 2, map[string][]int{"": {0, 6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "collect")
			src := &timedSource{memSource: memSource{segments: [][]byte{b}}, fps: fps}
			col := &Collector{Dir: dir, Every: 3 * time.Second, Max: c.max}
			st, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Zones: c.zones, Collect: col, Log: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for zone, want := range c.want {
				var names []string
				for _, f := range want {
					names = append(names, files[f])
				}
				zdir := filepath.Join(dir, zone)
				if got := listJPEG(t, zdir); !slices.Equal(got, names) {
					t.Fatalf("zone %q: files %v, want %v", zone, got, names)
				}
				x, y, w, h := 0, 0, 8, 6
				for _, z := range c.zones {
					if z.Name == zone {
						x, y, w, h = int(z.X), int(z.Y), int(z.W), int(z.H)
					}
				}
				for _, f := range want {
					got, err := os.ReadFile(filepath.Join(zdir, files[f]))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, wantJPEG(t, frames[f], x, y, w, h)) {
						t.Errorf("zone %q, frame %d: the file is not the JPEG of its crop", zone, f)
					}
				}
				total += len(want)
			}
			if st.Collected != total || col.Saved() != total {
				t.Errorf("stats say %d collected, collector %d; want %d", st.Collected, col.Saved(), total)
			}
		})
	}
}

// TestCollectLearnable: a zone's collected folder, once some of its files
// are moved into class folders inside it, is an image-folder data set
// (what flycl learn --data folder:DIR/ZONE reads): the class folders are
// its classes, each with its files, decodable; the unsorted files left at
// its top are not part of it and not listed as skipped.
func TestCollectLearnable(t *testing.T) {
	var b []byte
	for i := range 10 {
		b = append(b, ppm(pattern(8, 6, i))...)
	}
	dir := t.TempDir()
	src := &timedSource{memSource: memSource{segments: [][]byte{b}}, fps: 1}
	col := &Collector{Dir: dir, Every: time.Second}
	zones := []Zone{{Name: "gate", X: 2, Y: 1, W: 4, H: 4}}
	if _, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Zones: zones, Collect: col, Log: quiet()}); err != nil {
		t.Fatal(err)
	}
	zdir := filepath.Join(dir, "gate")
	names := listJPEG(t, zdir)
	if len(names) != 10 {
		t.Fatalf("%d files collected, want 10", len(names))
	}
	sorted := map[string][]string{"car": names[:3], "empty": names[3:5]}
	for class, files := range sorted {
		if err := os.Mkdir(filepath.Join(zdir, class), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.Rename(filepath.Join(zdir, f), filepath.Join(zdir, class, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	d, err := dataset.OpenFolder(zdir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Classes(), []string{"car", "empty"}) || d.Len() != 5 {
		t.Fatalf("classes %v, %d images; want car and empty, 5 images", d.Classes(), d.Len())
	}
	for i := range d.Len() {
		img, err := d.Image(i)
		if err != nil || img.W != 4 || img.H != 4 {
			t.Fatalf("%s: %v (want a 4×4 crop)", d.Path(i), err)
		}
	}
	if sk := dataset.Skipped(d); len(sk) != 0 {
		t.Fatalf("skipped %v; the unsorted files at the top are not listed", sk)
	}
}

// TestCollectFFmpegClip: a clip made by ffmpeg of three colours, one
// second each, read at 5 frames/s and collected every second of the
// video's time: frames 0, 5 and 10 (0, 1 and 2 s), red, green and blue,
// however fast the clip was read.
func TestCollectFFmpegClip(t *testing.T) {
	ff := needFFmpeg(t)
	path := filepath.Join(t.TempDir(), "colours.avi")
	out, err := exec.Command(ff, "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "color=c=red:s=64x48:d=1:r=10",
		"-f", "lavfi", "-i", "color=c=lime:s=64x48:d=1:r=10",
		"-f", "lavfi", "-i", "color=c=blue:s=64x48:d=1:r=10",
		"-filter_complex", "[0][1][2]concat=n=3:v=1", "-c:v", "mjpeg", "-q:v", "2", path).CombinedOutput()
	if err != nil {
		t.Fatalf("make the video: %v: %s", err, out)
	}
	dir := t.TempDir()
	col := &Collector{Dir: dir, Every: time.Second}
	src := &FFmpeg{Path: ff, Input: path, FPS: 5, ShortSide: 32}
	if _, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Collect: col, Log: quiet()}); err != nil {
		t.Fatal(err)
	}
	want := []string{"000000000.000s-frame-000000000.jpg", "000000001.000s-frame-000000005.jpg", "000000002.000s-frame-000000010.jpg"}
	if got := listJPEG(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	cl := &colourClassifier{}
	for i, colour := range []string{"red", "green", "blue"} {
		img, err := imageio.DecodeFile(filepath.Join(dir, want[i]))
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := cl.Classify(context.Background(), img); p.Answer != colour || img.W != 42 || img.H != 32 {
			t.Errorf("%s: %s %d×%d, want %s 42×32", want[i], p.Answer, img.W, img.H, colour)
		}
	}
}
