package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/internal/rtsptest"
)

// TestWatchConfig: flycl watch --config runs three cameras with one model
// learned (through SqueezeNet) on frames of four ImageNet photos (drawn
// pictures without ../shared): "desk" reads a video of those frames,
// "door" a real RTSP server (GStreamer's, H.264, on 127.0.0.1) looping
// them, "missing" a file that does not exist. The missing camera fails
// alone; desk's answers are every frame's class and its events the
// class sequence, as flycl watch --source gives them; door's answers are
// the served classes and its events follow the loop. The metrics on
// --metrics count door's events while it runs; when its server is killed
// door gives up after its one retry, and the command ends with an error
// naming door and missing, not desk.
func TestWatchConfig(t *testing.T) {
	lib, sq := squeezeNet(t)
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	rtsptest.Need(t, rtsptest.H264)
	sequence := []string{"tench", "magpie", "banana", "volcano"}
	dir, frames := watchPhotos(t, ff, map[string]string{"tench": "n01440764_tench.JPEG", "magpie": "n01582220_magpie.JPEG",
		"banana": "n07753592_banana.JPEG", "volcano": "n09472597_volcano.JPEG"})
	model := filepath.Join(t.TempDir(), "cam.flycl")
	if out, err := runCLI(t, "learn", "--data", "folder:"+dir, "--backbone", "squeezenet:"+sq, "--model", model, "--ort-lib", lib,
		"--cache", "", "--quiet", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	var want []string
	var jpegs [][]byte
	seqDir := t.TempDir()
	for _, c := range sequence {
		f, _ := os.Open(frames[c])
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
		for range 4 {
			os.WriteFile(filepath.Join(seqDir, fmt.Sprintf("%03d.jpg", len(want))), b.Bytes(), 0o644)
			want = append(want, c)
			jpegs = append(jpegs, b.Bytes())
		}
	}
	video := filepath.Join(t.TempDir(), "clip.avi")
	if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-framerate", "4", "-i", filepath.Join(seqDir, "%03d.jpg"),
		"-c:v", "mjpeg", "-q:v", "3", video).CombinedOutput(); err != nil {
		t.Fatalf("make the video: %v: %s", err, b)
	}
	srv := rtsptest.Start(t, rtsptest.Options{Frames: jpegs, Codec: rtsptest.H264, FPS: 8})
	conf := filepath.Join(t.TempDir(), "cameras.yaml")
	os.WriteFile(conf, []byte(fmt.Sprintf(`defaults:
  model: %s
  backbone: squeezenet:%s
  unknown: "off"
  top: 2
  debounce: 2
  fps: 0
cameras:
  - name: desk
    source: %s
  - name: door
    source: %s
    every_frame: true
    retries: 1
  - name: missing
    source: none.mp4
`, model, sq, video, srv.URL)), 0o644)
	port := rtsptest.FreePort(t)
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	killed := make(chan float64, 1)
	go func() { // kill door's server once it has given five events
		events := regexp.MustCompile(`flycl_watch_events_total\{camera="door"\} (\d+)`)
		for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			resp, err := http.Get(metrics)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if m := events.FindSubmatch(b); m != nil {
				if n, _ := strconv.ParseFloat(string(m[1]), 64); n >= 5 {
					srv.Stop()
					killed <- n
					return
				}
			}
		}
		srv.Stop()
		killed <- 0
	}()
	out, err := runCLI(t, "watch", "--config", conf, "--ort-lib", lib, "--metrics", fmt.Sprintf("127.0.0.1:%d", port), "--threads", "1")
	if n := <-killed; n < 5 {
		t.Fatalf("door's events on --metrics: %v (%v)", n, err)
	}
	if err == nil || !strings.Contains(err.Error(), `camera "door"`) || !strings.Contains(err.Error(), `camera "missing"`) ||
		strings.Contains(err.Error(), `camera "desk"`) {
		t.Fatalf("watch --config: %v", err)
	}
	answers, events := map[string][]string{}, map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l struct{ Type, Camera, Answer, Class string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if l.Type == "frame" {
			answers[l.Camera] = append(answers[l.Camera], l.Answer)
		} else {
			events[l.Camera] = append(events[l.Camera], l.Class)
		}
	}
	if !slices.Equal(answers["desk"], want) || !slices.Equal(events["desk"], sequence) {
		t.Fatalf("desk: answers %v\nwant %v\nevents %v, want %v", answers["desk"], want, events["desk"], sequence)
	}
	for _, a := range answers["door"] {
		if !slices.Contains(sequence, a) {
			t.Fatalf("door answered %q: %v", a, answers["door"])
		}
	}
	ev := events["door"]
	for i := 1; i < len(ev); i++ {
		if j := slices.Index(sequence, ev[i-1]); sequence[(j+1)%len(sequence)] != ev[i] {
			t.Fatalf("door's events %v do not follow the loop %v", ev, sequence)
		}
	}
	if len(ev) < 5 || len(answers["missing"]) != 0 {
		t.Fatalf("door's events %v, missing's answers %v", ev, answers["missing"])
	}
}

// TestWatchConfigFlagErrors: a camera's flag is refused beside --config,
// --metrics needs --config, and a bad file is named with its line.
func TestWatchConfigFlagErrors(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "cameras.yaml")
	os.WriteFile(conf, []byte("cameras:\n  - name: a\n    source: x.mp4\n    fps: fast\n    model: m.flycl\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--config", conf, "--model", "m.flycl"}, "--model: with --config each camera sets this"},
		{[]string{"watch", "--config", conf, "--zone", "a=0,0,1,1"}, "--zone: with --config"},
		{[]string{"watch", "--config", conf, "--object-keep", "0.9"}, "--object-keep: with --config each camera sets object_keep"},
		{[]string{"watch", "--model", "m.flycl", "--source", "x.mp4", "--metrics", "127.0.0.1:0"}, "--metrics needs --config"},
		{[]string{"watch", "--config", conf}, `line 4: camera 1: fps: want frames per second`},
		{[]string{"watch", "--config", filepath.Join(t.TempDir(), "none.yaml")}, "none.yaml"},
	} {
		if _, err := runCLI(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
}
