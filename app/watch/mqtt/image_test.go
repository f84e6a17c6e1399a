package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// halves is a file Source of 40×20 frames: the left 16 columns and the
// right 24 each of one class (the red value of every pixel indexes names)
// and a gradient of green and blue that tells the pixels apart.
type halves struct{ left, right []int }

func (f *halves) Open(context.Context) (watch.Stream, error) {
	return &halvesStream{left: f.left, right: f.right}, nil
}
func (f *halves) Live() bool     { return false }
func (f *halves) String() string { return "halves" }

type halvesStream struct{ left, right []int }

func (s *halvesStream) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	if len(s.left) == 0 {
		return nil, io.EOF
	}
	dst = halvesFrame(s.left[0], s.right[0])
	s.left, s.right = s.left[1:], s.right[1:]
	return dst, nil
}
func (s *halvesStream) Close() error { return nil }

func halvesFrame(l, r int) *imageio.RGB {
	img := imageio.NewRGB(40, 20)
	for y := range 20 {
		for x := range 40 {
			i := 3 * (y*40 + x)
			img.Pix[i] = uint8(l)
			if x >= 16 {
				img.Pix[i] = uint8(r)
			}
			img.Pix[i+1], img.Pix[i+2] = uint8(40+5*x), uint8(30+9*y)
		}
	}
	return img
}

func zoneRect(x, w int) image.Rectangle { return image.Rect(x, 0, x+w, 20) }

// boxScale is src scaled to w×h by a box filter: each pixel the mean of
// the source pixels whose box [x·W/w, (x+1)·W/w) × [y·H/h, (y+1)·H/h)
// covers.
func boxScale(src *imageio.RGB, w, h int) []float64 {
	out := make([]float64, 0, 3*w*h)
	for y := range h {
		for x := range w {
			var sum [3]float64
			n := 0
			for sy := y * src.H / h; sy < max((y+1)*src.H/h, y*src.H/h+1); sy++ {
				for sx := x * src.W / w; sx < max((x+1)*src.W/w, x*src.W/w+1); sx++ {
					for k := range 3 {
						sum[k] += float64(src.Pix[3*(sy*src.W+sx)+k])
					}
					n++
				}
			}
			for k := range 3 {
				out = append(out, sum[k]/float64(n))
			}
		}
	}
	return out
}

// TestImage: with Image each zone's image entity is announced to Home
// Assistant (the documented fields of the MQTT image platform: its
// image_topic, content_type image/jpeg, the camera's availability and
// device) and the crop that confirmed each published answer is published
// beside it, retained, as a JPEG of the crop's size (scaled down to
// ImageMaxSide on its longest side) showing the crop (its mean green and
// each pixel the mean of the crop's pixels it covers, within
// 3 levels on average): one picture per published answer.
func TestImage(t *testing.T) {
	b := startBroker(t)
	sub := subscribe(t, b, "flycl/#", "homeassistant/#")
	p, err := New(Options{Broker: b.url(), Camera: "drive", Zones: []string{"gate", "porch"}, Discovery: true, Model: "cam.flycl",
		Image: true, ImageMaxSide: 20, MaxBackoff: 2 * time.Second, Timeout: 5 * time.Second, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	p.Start(5 * time.Second)
	defer p.Close(time.Second)
	zones, err := watch.ParseZones([]string{"gate=0,0,16,20", "porch=16,0,24,20"})
	if err != nil {
		t.Fatal(err)
	}
	left, right := []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 0, 0}
	if _, err := watch.Run(context.Background(), watch.Config{Source: &halves{left, right}, Classify: classes{}, Zones: zones,
		Updates: p, Debounce: 2, Log: quiet()}); err != nil {
		t.Fatal(err)
	}
	if !p.Flush(10 * time.Second) {
		t.Fatal("the latest states were not published in 10 s")
	}
	last := halvesFrame(left[len(left)-1], right[len(right)-1])
	for _, c := range []struct {
		zone, state string
		x, w, wantW int // the crop's columns, and the picture's width
		wantH       int
	}{{"gate", "empty", 0, 16, 16, 20}, {"porch", "car", 16, 24, 20, 16}} {
		tp := p.ZoneTopics(c.zone)
		if tp.Image != "flycl/drive/"+c.zone+"/image" || tp.ImageDiscovery != "homeassistant/image/flycl_drive/"+c.zone+"_crop/config" {
			t.Fatalf("%s: topics %+v", c.zone, tp)
		}
		sub.last(t, tp.State, is(c.state))
		var d map[string]any
		if err := json.Unmarshal([]byte(sub.last(t, tp.ImageDiscovery, func(string) bool { return true })), &d); err != nil {
			t.Fatal(err)
		}
		dev, _ := d["device"].(map[string]any)
		ids, _ := dev["identifiers"].([]any)
		if d["image_topic"] != tp.Image || d["content_type"] != "image/jpeg" || d["unique_id"] != "flycl_drive_"+c.zone+"_crop" ||
			d["availability_topic"] != "flycl/drive/availability" || d["payload_available"] != "online" || d["name"] != c.zone+" crop" ||
			len(ids) != 1 || ids[0] != "flycl_drive" {
			t.Fatalf("%s: image discovery %v", c.zone, d)
		}
		pics, states := sub.on(tp.Image), sub.on(tp.State)
		if len(pics) == 0 || len(pics) != len(states) {
			t.Fatalf("%s: %d pictures for %d states: want one per published answer", c.zone, len(pics), len(states))
		}
		img, err := jpeg.Decode(bytes.NewReader([]byte(pics[len(pics)-1])))
		if err != nil {
			t.Fatalf("%s: the picture is not a JPEG: %v", c.zone, err)
		}
		if sz := img.Bounds().Size(); sz.X != c.wantW || sz.Y != c.wantH {
			t.Fatalf("%s: a %v picture, want %d×%d", c.zone, sz, c.wantW, c.wantH)
		}
		got := &imageio.RGB{W: img.Bounds().Dx(), H: img.Bounds().Dy()}
		for y := range got.H {
			for x := range got.W {
				r, g, bl, _ := img.At(x, y).RGBA()
				got.Pix = append(got.Pix, uint8(r>>8), uint8(g>>8), uint8(bl>>8))
			}
		}
		crop := watch.Crop(nil, last, zoneRect(c.x, c.w))
		// each pixel of the picture is the mean of the crop's pixels it
		// covers (a box filter), up to JPEG's quantisation, which moves a
		// smooth gradient by a few levels: the mean absolute difference
		// over the picture stays within 3 levels
		want := boxScale(crop, got.W, got.H)
		diff := 0.0
		for i := range got.Pix {
			diff += math.Abs(float64(got.Pix[i]) - want[i])
		}
		if diff /= float64(len(got.Pix)); diff > 3 {
			t.Fatalf("%s: the picture differs from the crop by %.2f levels on average", c.zone, diff)
		}
	}
	// retained: a later subscriber is given the last picture of each zone
	late := subscribe(t, b, "flycl/drive/+/image")
	for _, zone := range []string{"gate", "porch"} {
		want := sub.on(p.ZoneTopics(zone).Image)
		late.last(t, p.ZoneTopics(zone).Image, is(want[len(want)-1]))
		late.mu.Lock()
		retained := slices.ContainsFunc(late.msgs, func(m msg) bool { return m.topic == p.ZoneTopics(zone).Image && m.retained })
		late.mu.Unlock()
		if !retained {
			t.Fatalf("%s: the picture is not retained", zone)
		}
	}
	// without Image: no picture and no image entity
	q, err := New(Options{Broker: b.url(), Camera: "plain", Discovery: true})
	if err != nil {
		t.Fatal(err)
	}
	if tp := q.Topics(); tp.Image != "" || tp.ImageDiscovery != "" {
		t.Fatalf("topics without Image: %+v", tp)
	}
}
