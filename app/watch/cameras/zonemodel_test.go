package cameras

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// named answers its model's name and the colour classifier's answer
// ("car.flycl:blue"), with the model's version.
type named struct {
	name    string
	version uint64
	cl      *colourClassifier
}

func (n *named) Classify(ctx context.Context, img *imageio.RGB) (watch.Prediction, error) {
	p, err := n.cl.Classify(ctx, img)
	p.Answer = n.name + ":" + p.Answer
	p.ModelVersion = n.version
	return p, err
}

// TestZoneModels: a camera whose zones have models of their own. From a
// configuration file, a 64×48 picture (left half red, right half blue) is
// watched by two cameras: camera a's zone "left" by the camera's model,
// its zones "right" and "right2" by car.flycl; camera b's zone "back" (the right half) by
// car.flycl too and its zone "door" by door.flycl with its own unknown.
// Each distinct model (file, backbone, unknown, top) is opened once, the
// zones that share one share it, and each zone's line answers with its
// own model and that model's version.
func TestZoneModels(t *testing.T) {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := range 48 {
		for x := range 64 {
			c := colours["red"]
			if x >= 32 {
				c = colours["blue"]
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	pic := filepath.Join(t.TempDir(), "halves.jpg")
	if err := os.WriteFile(pic, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := `defaults:
  model: home.flycl
  fps: 0
  debounce: 1
cameras:
  - name: a
    source: ` + pic + `
    zones:
      - left=0,0,0.5,1.0
      - {name: right, rect: "32,0,32,48", model: car.flycl}
      - name: right2
        rect: 0.5,0,0.5,1.0
        model: car.flycl
  - name: b
    source: ` + pic + `
    zones:
      - {name: back, rect: "0.5,0,0.5,1.0", model: car.flycl}
      - {name: door, rect: "0,0,32,48", model: door.flycl, unknown: "0.4"}
`
	f, err := Parse([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	var opened []ModelKey
	versions := map[string]uint64{"home.flycl": 3, "car.flycl": 11, "door.flycl": 5}
	var out bytes.Buffer
	s, err := New(context.Background(), f, Options{
		Open: func(ctx context.Context, k ModelKey) (*Model, error) {
			opened = append(opened, k)
			return &Model{Classifier: &named{name: k.Model, version: versions[k.Model], cl: &colourClassifier{}}, Name: k.Model, Version: versions[k.Model]}, nil
		},
		FFmpeg: ff, Out: &out, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelKey{{Model: "home.flycl", Unknown: "auto", Top: 3}, {Model: "car.flycl", Unknown: "auto", Top: 3}, {Model: "door.flycl", Unknown: "0.4", Top: 3}}
	if !slices.Equal(opened, want) {
		t.Fatalf("models opened %+v, want %+v (each once)", opened, want)
	}
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]watch.FrameLine{}
	dec := json.NewDecoder(&out)
	for {
		var l watch.FrameLine
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if l.Type == "frame" {
			got[l.Camera+"/"+l.Zone] = l
		}
	}
	for zone, w := range map[string]struct {
		answer  string
		version uint64
	}{"a/left": {"home.flycl:red", 3}, "a/right": {"car.flycl:blue", 11}, "a/right2": {"car.flycl:blue", 11},
		"b/back": {"car.flycl:blue", 11}, "b/door": {"door.flycl:red", 5}} {
		l, ok := got[zone]
		if !ok {
			t.Fatalf("no frame line of %s in %v", zone, got)
		}
		if l.Answer != w.answer || l.ModelVersion != w.version {
			t.Fatalf("%s answered %q by version %d, want %q by %d", zone, l.Answer, l.ModelVersion, w.answer, w.version)
		}
	}
}
