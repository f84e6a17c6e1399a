package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"image/png"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/flycl/flycl/app/watch"
)

// watchPhotos makes the classes of the watch tests from shared ImageNet
// photos: each photo scaled to a 320×240 frame (ffmpeg, as a camera's
// frame), saved as PNG with a mirrored copy, laid out as DIR/<class>/ to
// learn from. Without ../shared it draws a 240×240 picture of a pattern
// per class instead (drawnAs). It returns the folder and each class's
// frame.
func watchPhotos(t *testing.T, ff string, classes map[string]string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	frames := map[string]string{}
	for class, photo := range classes {
		src := filepath.Join(sharedDir, "data", "imagenet-sample-500", photo)
		if _, err := os.Stat(src); err != nil {
			pattern, ok := drawnAs[class]
			if !ok {
				t.Fatalf("shared ImageNet sample photos not available (%v), and no drawn pattern for class %q", err, class)
			}
			src = filepath.Join(t.TempDir(), class+".png")
			r := rand.New(rand.NewPCG(5, uint64(len(class))<<8|uint64(class[0]))) // one picture per class, whatever the map's order
			if err := os.WriteFile(src, encodePicture(t, shapePicture(pattern, 240, r), "png"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(filepath.Join(dir, class), 0o755)
		for _, v := range []struct{ name, vf string }{{"frame", "scale=320:240"}, {"mirror", "scale=320:240,hflip"}} {
			out := filepath.Join(dir, class, v.name+".png")
			if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-i", src, "-vf", v.vf, out).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg %s: %v: %s", photo, err, b)
			}
		}
		frames[class] = filepath.Join(dir, class, "frame.png")
	}
	return dir, frames
}

// watchLines parses flycl watch's output: the frames' answers and the
// events' classes.
func watchLines(t *testing.T, out string) (answers, events []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l struct {
			Type   string `json:"type"`
			Answer string `json:"answer"`
			Class  string `json:"class"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch l.Type {
		case "frame":
			answers = append(answers, l.Answer)
		case "event":
			events = append(events, l.Class)
		}
	}
	return answers, events
}

// TestWatchVideoAndMJPEG: a model learned (through SqueezeNet) on frames
// of three ImageNet photos watches a video that ffmpeg made of those
// frames, each held for 4 frames: every frame's answer is the class
// shown and the events are the class sequence, POSTed to a webhook that
// fails twice before answering (each event arrives once, in order). The
// same frames served as MJPEG over HTTP by a local server that drops the
// stream after 6 frames and then serves the rest give the same answers:
// flycl watch reconnects and continues. Without ../shared: drawn
// pictures (watchPhotos) through the built-in SqueezeNet.
func TestWatchVideoAndMJPEG(t *testing.T) {
	lib, sq := squeezeNet(t)
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	dir, frames := watchPhotos(t, ff, map[string]string{"tench": "n01440764_tench.JPEG", "magpie": "n01582220_magpie.JPEG",
		"banana": "n07753592_banana.JPEG", "volcano": "n09472597_volcano.JPEG"})
	model := filepath.Join(t.TempDir(), "cam.flycl")
	if out, err := runCLI(t, "learn", "--data", "folder:"+dir, "--backbone", "squeezenet:"+sq, "--model", model, "--ort-lib", lib,
		"--cache", "", "--quiet", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}

	sequence := []string{"tench", "magpie", "banana", "volcano", "tench"}
	var want []string
	seqDir := t.TempDir()
	for _, c := range sequence {
		for range 4 {
			b, _ := os.ReadFile(frames[c])
			os.WriteFile(filepath.Join(seqDir, fmt.Sprintf("%03d.png", len(want))), b, 0o644)
			want = append(want, c)
		}
	}
	video := filepath.Join(t.TempDir(), "clip.avi")
	if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-framerate", "4", "-i", filepath.Join(seqDir, "%03d.png"),
		"-c:v", "mjpeg", "-q:v", "3", video).CombinedOutput(); err != nil {
		t.Fatalf("make the video: %v: %s", err, b)
	}

	var mu sync.Mutex
	var posted []watch.Event
	requests := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if requests++; requests <= 2 {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		var ev watch.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		posted = append(posted, ev)
	}))
	defer hook.Close()

	common := []string{"watch", "--model", model, "--ort-lib", lib, "--backbone", "squeezenet:" + sq, "--unknown", "off", "--debounce", "2", "--top", "2"}
	args := append(common, "--source", video, "--fps", "0", "--webhook", hook.URL)
	broker := mosquittoBroker(t) // "" without mosquitto
	if broker != "" {
		args = append(args, "--mqtt", broker, "--camera", "desk")
	}
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("watch the video: %v", err)
	}
	if broker != "" {
		// what a subscriber arriving afterwards finds retained
		got := retained(t, broker, "flycl/desk/state", "flycl/desk/availability", "flycl/desk/attributes", "homeassistant/sensor/flycl_desk/answer/config")
		if got["flycl/desk/state"] != sequence[len(sequence)-1] || got["flycl/desk/availability"] != "offline" ||
			!strings.Contains(got["flycl/desk/attributes"], `"class":"`+sequence[len(sequence)-1]+`"`) ||
			!strings.Contains(got["homeassistant/sensor/flycl_desk/answer/config"], `"state_topic":"flycl/desk/state"`) {
			t.Fatalf("retained on the broker: %q", got)
		}
	}
	answers, events := watchLines(t, out)
	if !slices.Equal(answers, want) || !slices.Equal(events, sequence) {
		t.Fatalf("video: answers %v\nwant %v\nevents %v, want %v", answers, want, events, sequence)
	}
	mu.Lock()
	for i, ev := range posted {
		if ev.ID != int64(i+1) || ev.Class != sequence[i] {
			t.Fatalf("posted event %d: %+v, want id %d class %s", i, ev, i+1, sequence[i])
		}
	}
	if len(posted) != len(sequence) || requests != len(sequence)+2 {
		t.Fatalf("%d events posted in %d requests, want %d in %d", len(posted), requests, len(sequence), len(sequence)+2)
	}
	mu.Unlock()

	// The same frames as MJPEG over HTTP, dropped after 6 frames.
	var jpegs [][]byte
	for _, c := range want {
		f, _ := os.Open(frames[c])
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
		jpegs = append(jpegs, b.Bytes())
	}
	parts := [][][]byte{jpegs[:6], jpegs[6:]}
	conns := 0
	cam := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := conns
		conns++
		mu.Unlock()
		if i >= len(parts) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "multipart/x-mixed-replace;boundary=frame")
		for _, j := range parts[i] {
			fmt.Fprintf(w, "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n", len(j))
			w.Write(j)
			w.Write([]byte("\r\n"))
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	defer cam.Close()
	out, err = runCLI(t, append(common, "--source", cam.URL+"/video.mjpg", "--fps", "0", "--every-frame", "--retries", "1")...)
	if err == nil || !strings.Contains(err.Error(), "reconnections without a frame") {
		t.Fatalf("a camera that stops serving: %v", err)
	}
	answers, events = watchLines(t, out)
	if !slices.Equal(answers, want) || !slices.Equal(events, sequence) {
		t.Fatalf("MJPEG: answers %v\nwant %v\nevents %v, want %v", answers, want, events, sequence)
	}
}

// TestWatchFlagErrors: flags are checked before any work.
func TestWatchFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--source", "x.mp4"}, "--model"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--object-keep", "1.5"}, "--object-keep"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--object-keep", "0.9", "--unknown", "off"}, "--object-keep"},
		{[]string{"watch", "--model", "m.flycl"}, "--source"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--fps", "-1"}, "--fps"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--webhook-queue", "0"}, "--webhook-queue"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--ffmpeg", "/nonexistent/ffmpeg"}, "--ffmpeg"},
		{[]string{"watch", "--model", filepath.Join(t.TempDir(), "none.flycl"), "--source", "x.mp4", "--ffmpeg", os.Args[0]}, "none.flycl"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--mqtt-user", "u"}, "--mqtt-user needs --mqtt"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--collect-every", "1m"}, "--collect-every needs --collect"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--collect-max", "5"}, "--collect-max needs --collect"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--inbox-every", "5"}, "--inbox-every applies to the labelling inbox"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--inbox", "ib", "--inbox-every", "0"}, "--inbox-every 0"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--inbox", "ib", "--inbox-below", "1.5"}, "--inbox-below 1.5"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--reload", "-1s"}, "--reload -1s"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--collect", "c", "--collect-every", "0s"}, "--collect-every must be positive"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--collect", "c", "--collect-every", "-1s"}, "--collect-every must be positive"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--collect", "c", "--collect-max", "0"}, "--collect-max must be positive"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--collect", "c", "--collect-every", "soon"}, "collect-every"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--zone", "door"}, "--zone"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--zone", "door=0,0,0.5,1.5"}, `"door"`},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--zone", "a=0,0,1,1", "--zone", "a=1,1,1,1"}, "two zones"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--mqtt", "http://broker"}, "--mqtt"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--mqtt", "mqtt://broker", "--camera", "a/b"}, "camera"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--mqtt", "mqtt://broker", "--mqtt-password-file", "/nonexistent/pw"}, "--mqtt-password-file"},
	} {
		if _, err := runCLI(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
}

// mosquittoBroker starts Debian's mosquitto on 127.0.0.1 and a free port
// for the test and returns its mqtt:// URL ("" when it is not installed:
// the MQTT part of a test is then skipped, logged).
func mosquittoBroker(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/mosquitto"); err != nil {
			t.Log("mosquitto not installed (apt-get install mosquitto): the MQTT part is skipped")
			return ""
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "mosquitto.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\n", l.Addr().(*net.TCPAddr).Port)), 0o644)
	cmd := exec.Command(bin, "-c", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "mqtt://" + addr
		}
		if time.Now().After(end) {
			t.Fatalf("mosquitto did not listen on %s in 5 s", addr)
		}
	}
}

// retained returns the retained payloads of topics on broker.
func retained(t *testing.T, broker string, topics ...string) map[string]string {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(strings.Replace(broker, "mqtt://", "tcp://", 1)).SetClientID("test-retained"))
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect %s: %v", broker, tok.Error())
	}
	defer c.Disconnect(0)
	var mu sync.Mutex
	got := map[string]string{}
	for _, tp := range topics {
		tok := c.Subscribe(tp, 1, func(_ paho.Client, m paho.Message) {
			mu.Lock()
			got[m.Topic()] = string(m.Payload())
			mu.Unlock()
		})
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", tp, tok.Error())
		}
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == len(topics) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return maps.Clone(got)
}
