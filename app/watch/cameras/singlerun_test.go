package cameras

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// squeezeModel saves a model of two classes learned (learns times) from
// random feature vectors with the built-in SqueezeNet's pipeline (what a model learned
// through it records), and returns its path and ONNX Runtime's resolver;
// the test is skipped without ONNX Runtime or ffmpeg.
func squeezeModel(t *testing.T, dir, name string, learns int) (string, locate.Resolver) {
	t.Helper()
	lib := os.Getenv(locate.EnvORTLib)
	if lib == "" {
		lib = "../../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	}
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("ONNX Runtime not available: %v", err)
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skipf("ffmpeg not installed: %v", err)
	}
	t.Setenv(locate.EnvModels, "") // the weights built into flycl
	os.Unsetenv(locate.EnvModels)
	bb, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), locate.BuiltinWeights)
	if err != nil {
		t.Fatal(err)
	}
	e, err := extract.NewExtractor(bb, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	const d = 512
	m, err := deploy.New(flycl.Config{M: 64, P: 4, K: 16, Seed: 1}, d, nil, e.Pipeline())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 4*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for range learns { // a version per learn
		if _, err := m.Learn(context.Background(), x, []string{"a", "b", "a", "b"}, nil, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if err := store.Save(context.Background(), path, m); err != nil {
		t.Fatal(err)
	}
	return path, locate.Resolver{Flags: map[string]string{locate.FlagORTLib: lib}}
}

// TestSingleRun: a Single of a video file (8 frames made by ffmpeg) with
// two zones, one with a model of its own, a webhook, doubtful frames
// saved, frames collected and a labelling inbox runs to the file's end
// and returns nil: a JSON line per zone and frame on Out (without a
// camera's name), the zone's lines carrying its own model's version,
// events POSTed to the webhook, the folders filled, the inbox keeping
// items of the camera; stats count the frames. A webhook that cannot be
// reached ends it with a *FieldError naming Webhook, wrapping
// watch.ErrUndelivered, after every frame.
func TestSingleRun(t *testing.T) {
	dir := t.TempDir()
	model, res := squeezeModel(t, dir, "cam.flycl", 1)
	zoneModel, _ := squeezeModel(t, dir, "zone.flycl", 2)
	versions := map[string]uint64{}
	for zone, path := range map[string]string{"left": model, "right": zoneModel} {
		m, err := store.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		versions[zone] = m.Model.Version()
	}
	if versions["left"] == versions["right"] {
		t.Fatalf("the two models have one version, %d", versions["left"])
	}
	video := filepath.Join(dir, "clip.avi")
	if b, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=4:duration=2",
		"-c:v", "mjpeg", video).CombinedOutput(); err != nil {
		t.Fatalf("make the video: %v: %s", err, b)
	}
	var mu sync.Mutex
	posted := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posted++
		mu.Unlock()
	}))
	defer hook.Close()

	s := validSingle()
	s.Model, s.Source, s.Resolver, s.FPS, s.Unknown, s.Debounce = model, video, res, 0, "off", 1
	s.Zones, s.ZoneModels = []string{"left=0,0,0.5,1.0", "right=0.5,0,0.5,1.0"}, []string{"right=" + zoneModel}
	s.Webhook, s.Flush = hook.URL, 5*time.Second
	s.Save = Save{Dir: filepath.Join(dir, "doubtful"), Below: 2, Max: 100, Every: 1}
	s.Collect = Collect{Dir: filepath.Join(dir, "collect"), Every: time.Millisecond, Max: 100}
	s.Inbox = Inbox{Dir: filepath.Join(dir, "inbox"), MaxItems: 100, MaxBytes: 1 << 24, Below: 1, Margin: 1e9, Every: 1}
	s.Camera = "drive"
	var out, log bytes.Buffer
	s.Out, s.LogTo, s.LogFormat = &out, &log, "json"
	st, err := s.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if st.Classified != 8 {
		t.Fatalf("stats %+v, want 8 frames classified", st)
	}
	lines := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l struct {
			Type, Zone, Camera string
			Version            uint64 `json:"model_version"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if l.Camera != "" || l.Version != versions[l.Zone] {
			t.Fatalf("line %s: want no camera, the right zone's lines of its own model", sc.Text())
		}
		lines[l.Type+" "+l.Zone]++
	}
	if lines["frame left"] != 8 || lines["frame right"] != 8 || lines["event left"] == 0 {
		t.Fatalf("lines by type and zone %v, want 8 frames of each zone and events", lines)
	}
	mu.Lock()
	if posted != lines["event left"]+lines["event right"] {
		t.Fatalf("%d events posted, want %d", posted, lines["event left"]+lines["event right"])
	}
	mu.Unlock()
	for _, sub := range []string{"doubtful/left", "collect/left", "collect/right"} {
		if files, _ := os.ReadDir(filepath.Join(dir, sub)); len(files) == 0 {
			t.Errorf("%s: no file saved", sub)
		}
	}
	ib, err := inbox.Open(s.Inbox.Dir, inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := ib.List()
	ib.Close()
	if len(items) == 0 || items[0].Camera != "drive" || items[0].Zone != "left" {
		t.Fatalf("inbox items %+v, want the left zone's frames of camera drive (the right zone has its own model)", items)
	}
	for _, want := range []string{`"msg":"zone model","zone":"right"`, `"msg":"watching"`, `"msg":"labelling inbox"`, `"msg":"model reloads","model":"` + zoneModel} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log without %s:\n%s", want, log.String())
		}
	}

	s.Webhook, s.Flush = "http://127.0.0.1:1/hook", time.Second
	s.Save, s.Collect, s.Inbox = Save{}, Collect{Every: time.Second, Max: 1}, validSingle().Inbox
	s.LogTo = nil
	s.Log = slog.New(slog.NewJSONHandler(&log, nil))
	out.Reset()
	st, err = s.Run(context.Background())
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Webhook" || !errors.Is(err, watch.ErrUndelivered) || st.Classified != 8 {
		t.Fatalf("Run with a webhook on a closed port: %v (%d frames), want a *FieldError on Webhook wrapping watch.ErrUndelivered", err, st.Classified)
	}
}
