package cameras

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/reject"
)

const full = `# two cameras, one broker
mqtt:
  broker: mqtt://192.168.1.10:1883
  user: flycl
  prefix: home
  discovery: false
  image: true
defaults:
  model: home.flycl
  fps: 2
  debounce: 4
cameras:
  - name: drive
    source: rtsp://user:pass@192.168.1.20:554/stream1
    zones:
      - gate=0,0,0.5,1.0
      - porch=1280,360,640,720
      - {name: car, rect: "0.5,0.3,0.5,0.7", model: car.flycl}
      - name: door
        rect: 0,0,320,240
        model: door.flycl
        unknown: "0.3"
        backbone: /opt/mobilenetv2.onnx
    webhook: http://alerts.local/hook
  - name: garden
    source: http://192.168.1.21/video.mjpg
    model: birds.flycl
    unknown: "0.4"
    fps: 0
    rtsp_transport: udp
    mqtt: false
    every_frame: true
    stall: 1m
    retries: 5
    top: 5
    webhook_queue: 16
`

func TestParse(t *testing.T) {
	f, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	base := Camera{Model: "home.flycl", FPS: 2, Debounce: 4, Unknown: "auto", Top: 3, WebhookQueue: 256, MQTT: true, Stall: 30 * time.Second}
	drive := base
	drive.Name, drive.Source, drive.Webhook, drive.Line = "drive", "rtsp://user:pass@192.168.1.20:554/stream1", "http://alerts.local/hook", 13
	drive.Zones = []watch.Zone{{Name: "gate", W: 0.5, H: 1, Fraction: true}, {Name: "porch", X: 1280, Y: 360, W: 640, H: 720},
		{Name: "car", X: 0.5, Y: 0.3, W: 0.5, H: 0.7, Fraction: true}, {Name: "door", W: 320, H: 240}}
	drive.ZoneModels = map[string]ZoneModel{"car": {Model: "car.flycl"}, "door": {Model: "door.flycl", Unknown: "0.3", Backbone: "/opt/mobilenetv2.onnx"}}
	garden := base
	garden.Name, garden.Source, garden.Model, garden.Unknown, garden.FPS, garden.RTSPTransport = "garden", "http://192.168.1.21/video.mjpg", "birds.flycl", "0.4", 0, "udp"
	garden.MQTT, garden.EveryFrame, garden.Stall, garden.Retries, garden.Top, garden.WebhookQueue, garden.Line = false, true, time.Minute, 5, 5, 16, 25
	want := &File{MQTT: &MQTT{Broker: "mqtt://192.168.1.10:1883", User: "flycl", Prefix: "home", Image: true}, Cameras: []Camera{drive, garden}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", f, want)
	}
	if drive.Key() == garden.Key() {
		t.Fatal("two models, one key")
	}
	// a zone's own model: its file, its backbone, its unknown (else the
	// camera's), the camera's top; a zone without one has no key
	for zone, want := range map[string]ModelKey{"car": {Model: "car.flycl", Unknown: "auto", Top: 3},
		"door": {Model: "door.flycl", Unknown: "0.3", Backbone: "/opt/mobilenetv2.onnx", Top: 3}} {
		if k, ok := drive.ZoneKey(zone); !ok || k != want {
			t.Fatalf("zone %s: key %+v, %v; want %+v", zone, k, ok, want)
		}
	}
	if _, ok := drive.ZoneKey("gate"); ok {
		t.Fatal("the gate zone has no model of its own, yet a key")
	}
}

// TestParseErrors: each mistake is an error wrapping ErrConfig that names
// its line and its field.
func TestParseErrors(t *testing.T) {
	cam := "cameras:\n  - name: a\n    source: clip.mp4\n    model: m.flycl\n"
	for _, tc := range []struct{ name, file, want string }{
		{"empty", "", "empty"},
		{"not yaml", "cameras: [", "yaml"},
		{"no cameras", "mqtt:\n  broker: mqtt://h\n", "line 1: no cameras"},
		{"cameras not a list", "cameras: 3\n", "line 1: cameras: want a list"},
		{"no camera", "cameras: []\n", "0 cameras"},
		{"unknown top key", "camera:\n  - name: a\n", `line 1: the file: unknown key "camera"`},
		{"unknown camera key", cam + "    fsp: 2\n", `line 5: camera 1: unknown key "fsp"`},
		{"twice", cam + "    model: n.flycl\n", "line 5: camera 1: model given twice"},
		{"no name", "cameras:\n  - source: x\n    model: m\n", "line 2: camera 1: no name"},
		{"bad name", "cameras:\n  - name: a/b\n    source: x\n    model: m\n", `name "a/b"`},
		{"no source", "cameras:\n  - name: a\n    model: m\n", `line 2: camera "a": no source`},
		{"no model", "cameras:\n  - name: a\n    source: x\n", `line 2: camera "a": no model`},
		{"bad fps", cam + "    fps: fast\n", `line 5: camera 1: fps: want frames per second`},
		{"negative fps", cam + "    fps: -1\n", `fps`},
		{"fps list", cam + "    fps: [1]\n", `line 5: camera 1: fps: want a single value`},
		{"bad debounce", cam + "    debounce: 0\n", `debounce: want a whole number from 1`},
		{"bad stall", cam + "    stall: soon\n", `line 5: camera 1: stall: want a positive duration`},
		{"bad bool", cam + "    every_frame: maybe\n", `every_frame: want true or false`},
		{"bad zone", cam + "    zones: [gate=0,0,2.5,1]\n", `line 5: camera "a": zones: watch: bad zone "gate"`},
		{"zones not a list", cam + "    zones: gate\n", `zones: want a list`},
		{"zones in brackets", cam + "    zones: [gate=0,0,0.5,1.0]\n", `line 5: camera "a": zones: watch: bad zone "gate": want four numbers X,Y,W,H, got 1 (in [ ] a comma separates items`},
		{"two zones one name", cam + "    zones: [\"g=0,0,1,1\", \"g=1,1,1,1\"]\n", `two zones are named "g"`},
		{"bad transport", cam + "    rtsp_transport: http\n", `rtsp_transport "http"`},
		{"bad webhook", cam + "    webhook: ftp://x\n", `webhook "ftp://x"`},
		{"two names", cam + "  - name: a\n    source: y\n    model: m\n", `line 5: camera "a": the camera of line 2 has this name`},
		{"mqtt without broker", "mqtt:\n  user: u\n" + cam, "line 2: mqtt: no broker"},
		{"mqtt camera without broker", cam + "    mqtt: true\n", "mqtt: true needs a broker"},
		{"unknown mqtt key", "mqtt:\n  host: h\n" + cam, `line 2: mqtt: unknown key "host"`},
		{"bad mqtt image", "mqtt:\n  broker: mqtt://h\n  image: jpeg\n" + cam, `line 3: mqtt: image: want true or false`},
		{"alias", "defaults: &d\n  fps: 1\n" + cam + "    fps: *d\n", "line 7: YAML aliases"},
		{"name in defaults", "defaults:\n  name: x\n" + cam, `line 2: defaults: unknown key "name"`},
		{"null source", "cameras:\n  - name: a\n    source:\n    model: m\n", `source: want a string`},
		{"zone mapping without rect", cam + "    zones:\n      - name: gate\n        model: g.flycl\n", `line 6: camera "a": zone 1: no rect`},
		{"zone mapping bad name", cam + "    zones:\n      - {name: a/b, rect: \"0,0,1,1\"}\n", `line 6: camera "a": zone 1: name "a/b"`},
		{"zone mapping no name", cam + "    zones:\n      - {rect: \"0,0,1,1\"}\n", `line 6: camera "a": zone 1: name ""`},
		{"zone mapping bad rect", cam + "    zones:\n      - gate=0,0,1,1\n      - name: door\n        rect: 0,0,2.5,1\n", `line 8: camera "a": zone 2: rect: watch: bad zone "door"`},
		{"zone mapping unknown key", cam + "    zones:\n      - name: gate\n        rect: 0,0,1,1\n        modle: g.flycl\n", `line 8: camera "a": zone 1: unknown key "modle"`},
		{"zone mapping model list", cam + "    zones:\n      - {name: gate, rect: \"0,0,1,1\", model: [g]}\n", `line 6: camera "a": zone 1: model: want a single value`},
		{"zone unknown without model", cam + "    zones:\n      - {name: gate, rect: \"0,0,1,1\", unknown: off}\n", `line 6: camera "a": zone 1: unknown, keep and backbone go with the zone's own model`},
		{"zone mapping twice", cam + "    zones:\n      - {name: gate, rect: \"0,0,1,1\"}\n      - {name: gate, rect: \"1,1,1,1\", model: g}\n", `line 7: camera "a": zones: two zones are named "gate"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file))
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrConfig with %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte(strings.Repeat("#", MaxFileSize+1))); !errors.Is(err, ErrConfig) {
		t.Fatalf("a file too large: %v", err)
	}
}

// FuzzParse: whatever the bytes, Parse returns an error or a file whose
// cameras are all usable: a valid unique name, a source, a model, zones
// that parse back to themselves, values in their ranges.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("cameras:\n  - name: a\n    source: clip.mp4\n    model: m.flycl\n"))
	f.Add([]byte("cameras:\n  - {name: a, source: x, model: m, zones: [g=0,0,1,1]}\n"))
	f.Add([]byte("defaults: &d\n  fps: 1\ncameras:\n  - <<: *d\n"))
	f.Add([]byte("cameras: [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]\n"))
	f.Add([]byte("mqtt: {broker: mqtt://h}\ncameras:\n  - {name: a, source: x, model: m, mqtt: true, stall: 1h}\n"))
	f.Add([]byte("cameras:\n  - name: a\n    source: x\n    model: m\n    zones:\n      - {name: g, rect: \"0,0,0.5,1.0\", model: g.flycl, unknown: \"0.4\"}\n      - d=1,1,2,2\n"))
	f.Add([]byte("defaults:\n  zones:\n    - name: g\n      rect: 0,0,1,1\n      model: g\ncameras:\n  - {name: a, source: x, model: m}\n"))
	f.Add([]byte("defaults: {keep: 95%}\ncameras:\n  - {name: a, source: x, model: m, keep: 0.9, unknown: auto}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("an error that is not ErrConfig: %v", err)
			}
			return
		}
		if len(file.Cameras) == 0 || len(file.Cameras) > MaxCameras {
			t.Fatalf("%d cameras", len(file.Cameras))
		}
		names := map[string]bool{}
		for _, c := range file.Cameras {
			if !watch.ValidZoneName(c.Name) || names[c.Name] || c.Source == "" || c.Model == "" ||
				c.FPS < 0 || c.Debounce < 1 || c.Top < 1 || c.Stall <= 0 || c.WebhookQueue < 1 || (c.MQTT && file.MQTT == nil) {
				t.Fatalf("an unusable camera: %+v", c)
			}
			names[c.Name] = true
			if _, err := watch.ParseZones(zoneStrings(c.Zones)); err != nil || len(c.Zones) > MaxZones {
				t.Fatalf("zones %v: %v", c.Zones, err)
			}
			for name, zm := range c.ZoneModels { // a zone's own model is one of its zones' and names a file
				if !slices.ContainsFunc(c.Zones, func(z watch.Zone) bool { return z.Name == name }) || zm.Model == "" {
					t.Fatalf("zone models %v of zones %v", c.ZoneModels, c.Zones)
				}
			}
		}
	})
}

func zoneStrings(zs []watch.Zone) []string {
	var s []string
	for _, z := range zs {
		s = append(s, z.String())
	}
	return s
}

// TestLoadRelative: the relative paths of a file are taken from its
// folder; URLs, devices and absolute paths are kept.
func TestLoadRelative(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cameras.yaml")
	conf := "mqtt:\n  broker: mqtt://h\n  password_file: pw\n  ca: /etc/ca.pem\ncameras:\n" +
		"  - {name: a, source: clip.mp4, model: m.flycl}\n" +
		"  - {name: b, source: rtsp://h/s, model: /models/m.flycl}\n" +
		"  - {name: c, source: /dev/video0, model: sub/m.flycl, zones: [{name: z, rect: \"0,0,1,1\", model: z.flycl}]}\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{f.MQTT.PasswordFile, f.MQTT.CA}
	for _, c := range f.Cameras {
		got = append(got, c.Source, c.Model)
	}
	got = append(got, f.Cameras[2].ZoneModels["z"].Model)
	want := []string{filepath.Join(dir, "pw"), "/etc/ca.pem", filepath.Join(dir, "clip.mp4"), filepath.Join(dir, "m.flycl"),
		"rtsp://h/s", "/models/m.flycl", "/dev/video0", filepath.Join(dir, "sub/m.flycl"), filepath.Join(dir, "z.flycl")}
	if !slices.Equal(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
	if _, err := Load(filepath.Join(dir, "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

// keep: a share of the known photos kept, in a person's units, is the
// camera's rejection choice keep:SHARE (watch.ParseRejection turns it into
// a threshold from the model's pool); a bad share, or keep beside a raw
// unknown, is refused naming the line.
func TestParseKeep(t *testing.T) {
	cam := "cameras:\n  - name: a\n    source: clip.mp4\n    model: m.flycl\n"
	for _, c := range []struct{ yaml, want string }{
		{cam + "    keep: 0.9\n", "keep:0.9"},
		{cam + "    keep: 95%\n", "keep:95%"},
		{"defaults:\n  keep: 0.8\n" + cam, "keep:0.8"},
	} {
		f, err := Parse([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if got := f.Cameras[0].Unknown; got != c.want {
			t.Errorf("%q: unknown %q, want %q", c.yaml, got, c.want)
		}
	}
	f, err := Parse([]byte(cam + "    zones:\n      - {name: g, rect: \"0,0,1,1\", model: g.flycl, keep: 0.9}\n"))
	if err != nil || f.Cameras[0].ZoneModels["g"].Unknown != "keep:0.9" {
		t.Fatalf("a zone model's keep: %+v, %v", f, err)
	}
	for _, c := range []struct{ yaml, want string }{
		{cam + "    keep: 1.5\n", `line 5: camera 1: keep`},
		{cam + "    keep: 0\n", `line 5: camera 1: keep`},
		{cam + "    keep: lots\n", `line 5: camera 1: keep`},
		{cam + "    unknown: \"-2\"\n    keep: 0.9\n", "line 6: camera 1: give one of unknown, keep, object_keep, not both unknown and keep"},
		{cam + "    zones:\n      - {name: g, rect: \"0,0,1,1\", keep: 0.9}\n", "keep and backbone go with the zone's own model"},
		{cam + "    zones:\n      - {name: g, rect: \"0,0,1,1\", model: g.flycl, keep: 0.9, unknown: off}\n", "not both keep and unknown"},
	} {
		if _, err := Parse([]byte(c.yaml)); err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming %q", c.yaml, err, c.want)
		}
	}
}

// object_keep: the share of known objects a zone's state confirms becomes
// the per-frame share 1 − (1 − K)/debounce (every frame of the debounce
// must pass: the union bound), the camera's own choice overriding the
// defaults' either way.
func TestParseObjectKeep(t *testing.T) {
	cam := "cameras:\n  - name: a\n    source: clip.mp4\n    model: m.flycl\n"
	frameKeep := func(u string) float64 {
		k, ok, err := reject.ParseKeep(u)
		if !ok || err != nil {
			t.Fatalf("%q: not a keep choice (%v)", u, err)
		}
		return k
	}
	for _, c := range []struct {
		yaml string
		want float64
	}{
		{cam + "    object_keep: 0.95\n", 1 - 0.05/3},
		{cam + "    object_keep: 90%\n    debounce: 5\n", 1 - 0.1/5},
		{"defaults:\n  object_keep: 0.95\n  debounce: 2\n" + cam, 1 - 0.05/2},
		{"defaults:\n  object_keep: 0.95\n" + cam + "    keep: 0.8\n", 0.8},
		{"defaults:\n  keep: 0.8\n" + cam + "    object_keep: 0.95\n", 1 - 0.05/3},
	} {
		f, err := Parse([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		// 6 significant digits are written
		if got := frameKeep(f.Cameras[0].Unknown); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%q: per-frame keep %g, want %g", c.yaml, got, c.want)
		}
	}
	for _, c := range []struct{ yaml, want string }{
		{cam + "    object_keep: 0\n", "line 5: camera 1: object_keep"},
		{cam + "    object_keep: 0.9\n    unknown: off\n", "not both object_keep and unknown"},
	} {
		if _, err := Parse([]byte(c.yaml)); err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming %q", c.yaml, err, c.want)
		}
	}
	if _, err := ObjectKeepChoice(1.5, 3); err == nil {
		t.Error("ObjectKeepChoice accepted 1.5")
	}
}
