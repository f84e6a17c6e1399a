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

// TestWatchConfigZoneModelReload: with --config a zone's own model is
// reloaded on its own. A camera watches a real RTSP server (GStreamer's,
// on 127.0.0.1) looping 640×240 frames whose left half shows tench or
// magpie and right half banana or volcano; the camera's model (learned
// through SqueezeNet on tench and magpie) classifies the left zone and a
// zone model (learned on banana and volcano) the right one. While it
// runs, a second version of the zone model is moved over its file: the
// right zone's lines switch to that version without a restart and never
// go back, the left zone's version never changes, and each zone answers
// only its own model's classes.
func TestWatchConfigZoneModelReload(t *testing.T) {
	lib, sq := squeezeNet(t)
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	rtsptest.Need(t, rtsptest.H264)
	dirA, framesA := watchPhotos(t, ff, map[string]string{"tench": "n01440764_tench.JPEG", "magpie": "n01582220_magpie.JPEG"})
	dirB, framesB := watchPhotos(t, ff, map[string]string{"banana": "n07753592_banana.JPEG", "volcano": "n09472597_volcano.JPEG"})
	tmp := t.TempDir()
	fish, zone, food2 := filepath.Join(tmp, "fish.flycl"), filepath.Join(tmp, "zone.flycl"), filepath.Join(tmp, "food2.flycl")
	learn := func(model, dir string) {
		t.Helper()
		if out, err := runCLI(t, "learn", "--data", "folder:"+dir, "--backbone", "squeezenet:"+sq, "--model", model, "--ort-lib", lib,
			"--cache", "", "--quiet", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
			t.Fatalf("learn: %v\n%s", err, out)
		}
	}
	learn(fish, dirA)
	learn(zone, dirB)
	b, err := os.ReadFile(zone)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(food2, b, 0o644)
	learn(food2, dirB) // the zone model's second version
	var jpegs [][]byte
	seqDir := t.TempDir()
	for i, pair := range [][2]string{{"tench", "banana"}, {"magpie", "banana"}, {"magpie", "volcano"}, {"tench", "volcano"}} {
		out := filepath.Join(seqDir, fmt.Sprintf("%d.png", i))
		if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-i", framesA[pair[0]], "-i", framesB[pair[1]],
			"-filter_complex", "hstack", out).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg hstack: %v: %s", err, b)
		}
		f, _ := os.Open(out)
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
		for range 3 {
			jpegs = append(jpegs, b.Bytes())
		}
	}
	srv := rtsptest.Start(t, rtsptest.Options{Frames: jpegs, Codec: rtsptest.H264, FPS: 8})
	conf := filepath.Join(t.TempDir(), "cameras.yaml")
	os.WriteFile(conf, []byte(fmt.Sprintf(`cameras:
  - name: yard
    source: %s
    model: %s
    backbone: squeezenet:%s
    unknown: "off"
    fps: 0
    debounce: 1
    every_frame: true
    retries: 1
    zones:
      - left=0,0,320,240
      - {name: right, rect: "0.5,0,0.5,1.0", model: %s}
`, srv.URL, fish, sq, zone)), 0o644)
	port := rtsptest.FreePort(t)
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	moved := make(chan error, 1)
	go func() { // the new version after 4 frames; the server stopped 30 frames later
		classified := regexp.MustCompile(`flycl_watch_frames_classified_total\{camera="yard"\} (\d+)`)
		at := -1.0
		var err error
		for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			resp, gerr := http.Get(metrics)
			if gerr != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			m := classified.FindSubmatch(b)
			if m == nil {
				continue
			}
			n, _ := strconv.ParseFloat(string(m[1]), 64)
			if at < 0 && n >= 4 {
				err, at = os.Rename(food2, zone), n
			}
			if at >= 0 && n >= at+30 {
				break
			}
		}
		srv.Stop()
		moved <- err
	}()
	out, _ := runCLI(t, "watch", "--config", conf, "--ort-lib", lib, "--metrics", fmt.Sprintf("127.0.0.1:%d", port), "--threads", "1", "--reload", "100ms")
	if err := <-moved; err != nil {
		t.Fatal(err)
	}
	versions := map[string][]uint64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l struct {
			Type, Zone, Answer string
			ModelVersion       uint64 `json:"model_version"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if l.Type != "frame" {
			continue
		}
		if own := map[string][]string{"left": {"tench", "magpie"}, "right": {"banana", "volcano"}}[l.Zone]; !slices.Contains(own, l.Answer) {
			t.Fatalf("zone %s answered %q, not one of its model's %v", l.Zone, l.Answer, own)
		}
		versions[l.Zone] = append(versions[l.Zone], l.ModelVersion)
	}
	left, right := slices.Compact(slices.Clone(versions["left"])), slices.Compact(slices.Clone(versions["right"]))
	if len(left) != 1 || len(right) != 2 || right[1] <= right[0] {
		t.Fatalf("model versions in the zones' lines: left %v, right %v; want one left, two rising right", left, right)
	}
}
