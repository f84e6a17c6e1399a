package cameras

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/internal/rtsptest"
	"github.com/flycl/flycl/vision/imageio"
)

var colours = map[string]color.RGBA{"red": {255, 0, 0, 255}, "green": {0, 255, 0, 255}, "blue": {0, 0, 255, 255}, "white": {255, 255, 255, 255}}

// colourClassifier answers the colour nearest to a frame's mean; it is
// safe for concurrent use (cameras share it).
type colourClassifier struct{ calls atomic.Int64 }

func (c *colourClassifier) Classify(ctx context.Context, img *imageio.RGB) (watch.Prediction, error) {
	c.calls.Add(1)
	var m [3]float64
	for i := 0; i < len(img.Pix); i += 3 {
		for k := range 3 {
			m[k] += float64(img.Pix[i+k])
		}
	}
	n := float64(img.W * img.H)
	best, bestD := "", -1.0
	for name, c := range colours {
		d := 0.0
		for k, v := range []uint8{c.R, c.G, c.B} {
			d += (m[k]/n - float64(v)) * (m[k]/n - float64(v))
		}
		if bestD < 0 || d < bestD {
			best, bestD = name, d
		}
	}
	return watch.Prediction{Top: []flycl.Ranked{{Name: best, Score: 1}}, Answer: best}, nil
}

func frames(t *testing.T, n int, names ...string) [][]byte {
	var fs [][]byte
	for _, name := range names {
		img := image.NewRGBA(image.Rect(0, 0, 64, 48))
		for y := range 48 {
			for x := range 64 {
				img.Set(x, y, colours[name])
			}
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
			t.Fatal(err)
		}
		for range n {
			fs = append(fs, b.Bytes())
		}
	}
	return fs
}

func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

// scrape reads the metrics served by h as Prometheus's own parser reads
// them: the value of each metric by camera.
func scrape(t *testing.T, text []byte) map[string]map[string]float64 {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the metrics do not parse: %v\n%s", err, text)
	}
	out := map[string]map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "flycl_watch_") {
			continue
		}
		out[name] = map[string]float64{}
		for _, m := range f.Metric {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			for _, l := range m.Label {
				if l.GetName() == "camera" {
					out[name][l.GetValue()] = v
				}
			}
		}
	}
	return out
}

func get(t *testing.T, url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return b
}

// TestRun: four cameras in one process, from a configuration file. Two
// watch real RTSP servers (GStreamer's, on 127.0.0.1), one sending red
// and green as Motion JPEG, one blue and white as H.264 in two zones; the
// third's server is not there (it gives up after two reconnections), the
// fourth's file does not exist. The two that fail stop alone while the
// others go on classifying and posting events; every line and event
// names its camera and shows only its own server's colours; the two
// cameras of one model share one loaded copy; the Prometheus metrics
// (parsed by Prometheus's own parser, and checked by promtool when it is
// installed) count each camera's frames, reconnections and events as
// the results do, and say which cameras are up.
func TestRun(t *testing.T) {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	rtsptest.Need(t, rtsptest.H264)
	one := rtsptest.Start(t, rtsptest.Options{Frames: frames(t, 5, "red", "green"), Codec: rtsptest.JPEG})
	two := rtsptest.Start(t, rtsptest.Options{Frames: frames(t, 5, "blue", "white"), Codec: rtsptest.H264})
	var mu sync.Mutex
	var hooked []watch.Event
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev watch.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("webhook: %v", err)
		}
		mu.Lock()
		hooked = append(hooked, ev)
		mu.Unlock()
	}))
	defer hook.Close()
	conf := fmt.Sprintf(`defaults:
  model: colours.flycl
  fps: 0
  debounce: 2
  every_frame: true
  stall: 10s
cameras:
  - name: drive
    source: %s
    webhook: %s
  - name: garden
    source: %s
    zones:
      - left=0,0,0.5,1.0
      - right=32,0,32,48
  - name: gone
    source: rtsp://127.0.0.1:%d/clip
    retries: 2
  - name: missing
    source: %s
    model: other.flycl
`, one.URL, hook.URL, two.URL, closedPort(t), filepath.Join(t.TempDir(), "none.mp4"))
	f, err := Parse([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	var opened []ModelKey
	cl := &colourClassifier{}
	var out bytes.Buffer
	outMu := &lockedWriter{w: &out}
	s, err := New(context.Background(), f, Options{
		Open: func(ctx context.Context, k ModelKey) (*Model, error) {
			opened = append(opened, k)
			return &Model{Classifier: cl, Name: k.Model}, nil
		},
		FFmpeg: ff, Out: outMu, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MetricsAddr: "127.0.0.1:0",
		Backoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Flush: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 2 || opened[0].Model != "colours.flycl" || opened[1].Model != "other.flycl" {
		t.Fatalf("models opened: %+v, want colours.flycl once and other.flycl", opened)
	}
	url := "http://" + s.Addr().String() + "/metrics"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type ran struct {
		res []Result
		err error
	}
	done := make(chan ran, 1)
	go func() { r, err := s.Run(ctx); done <- ran{r, err} }()

	// wait until the failing cameras are down, then for three more events
	// of each working one
	var m map[string]map[string]float64
	var after map[string]float64
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("metrics after 90 s: %v", m)
		}
		m = scrape(t, get(t, url))
		up := m["flycl_watch_camera_up"]
		ev := m["flycl_watch_events_total"]
		if after == nil && up["gone"] == 0 && up["missing"] == 0 && up["drive"] == 1 && up["garden"] == 1 {
			after = map[string]float64{"drive": ev["drive"], "garden": ev["garden"]}
		}
		if after != nil && ev["drive"] >= after["drive"]+3 && ev["garden"] >= after["garden"]+6 { // two zones
			break
		}
	}
	if m["flycl_watch_reconnects_total"]["gone"] != 2 || m["flycl_watch_last_frame_age_seconds"]["drive"] > 5 ||
		m["flycl_watch_frames_read_total"]["drive"] < m["flycl_watch_frames_classified_total"]["drive"] {
		t.Fatalf("metrics while running: %v", m)
	}
	text := get(t, url)
	if promtool, err := exec.LookPath("promtool"); err != nil {
		t.Logf("promtool not installed (apt-get install prometheus): the metrics were checked with Prometheus's parser only")
	} else {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(text)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool check metrics: %v: %s", err, msg)
		}
	}
	cancel()
	r := <-done
	if r.err == nil || !strings.Contains(r.err.Error(), `camera "gone"`) || !strings.Contains(r.err.Error(), `camera "missing"`) ||
		strings.Contains(r.err.Error(), `camera "drive"`) || strings.Contains(r.err.Error(), `camera "garden"`) {
		t.Fatalf("Run's error: %v", r.err)
	}
	byName := map[string]Result{}
	for _, res := range r.res {
		byName[res.Camera] = res
	}
	if byName["drive"].Err != nil || byName["garden"].Err != nil || byName["gone"].Stats.Reconnects != 2 || byName["missing"].Stats.Frames != 0 {
		t.Fatalf("results: %+v", r.res)
	}
	// the metrics after the end are the results' counts
	final := httptest.NewRecorder()
	s.Handler().ServeHTTP(final, httptest.NewRequest("GET", "/metrics", nil))
	m = scrape(t, final.Body.Bytes())
	for _, res := range r.res {
		n, st := res.Camera, res.Stats
		if m["flycl_watch_frames_read_total"][n] != float64(st.Frames) || m["flycl_watch_frames_classified_total"][n] != float64(st.Classified) ||
			m["flycl_watch_frames_dropped_total"][n] != float64(st.Stale) || m["flycl_watch_reconnects_total"][n] != float64(st.Reconnects) ||
			m["flycl_watch_events_total"][n] != float64(st.Events) || m["flycl_watch_camera_up"][n] != 0 {
			t.Fatalf("camera %s: metrics %v, stats %+v", n, m, st)
		}
	}

	// the lines: each names its camera and shows its server's colours
	want := map[string][]string{"drive": {"red", "green"}, "garden": {"blue", "white"}}
	n := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		var l struct {
			Type, Camera, Zone, Answer, Class string
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		a := l.Answer + l.Class
		if !slices.Contains(want[l.Camera], a) || (l.Camera == "garden") != (l.Zone != "") {
			t.Fatalf("camera %q zone %q: %s %q", l.Camera, l.Zone, l.Type, a)
		}
		n[l.Camera+"/"+l.Type]++
	}
	if int64(n["drive/frame"]+n["garden/frame"]) != cl.calls.Load() || n["drive/event"] != byName["drive"].Stats.Events {
		t.Fatalf("lines %v, %d classifications", n, cl.calls.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hooked) != byName["drive"].Stats.Events {
		t.Fatalf("%d events posted, %d events of drive", len(hooked), byName["drive"].Stats.Events)
	}
	for i, e := range hooked {
		if e.Camera != "drive" || e.ID != int64(i+1) || !slices.Contains(want["drive"], e.Class) {
			t.Fatalf("posted event %d: %+v", i, e)
		}
	}
}
