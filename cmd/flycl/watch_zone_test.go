package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWatchZones: a model learned (through SqueezeNet) on whole 320×240
// frames watches a 640×240 video whose left and right halves show
// different classes changing at different times, with one zone per half
// (the left in pixels, the right in fractions): each zone's answers and
// events follow its own half, and with --mqtt each zone's retained state
// is its last answer. Without ../shared: drawn pictures.
func TestWatchZones(t *testing.T) {
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
	left := []string{"tench", "tench", "tench", "tench", "magpie", "magpie", "magpie", "magpie", "tench", "tench", "tench"}
	right := []string{"banana", "banana", "volcano", "volcano", "volcano", "volcano", "volcano", "volcano", "volcano", "banana", "banana"}
	seqDir := t.TempDir()
	for i := range left {
		if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-i", frames[left[i]], "-i", frames[right[i]],
			"-filter_complex", "hstack", filepath.Join(seqDir, fmt.Sprintf("%03d.png", i))).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg hstack: %v: %s", err, b)
		}
	}
	video := filepath.Join(t.TempDir(), "clip.avi")
	if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-framerate", "4", "-i", filepath.Join(seqDir, "%03d.png"),
		"-c:v", "mjpeg", "-q:v", "3", video).CombinedOutput(); err != nil {
		t.Fatalf("make the video: %v: %s", err, b)
	}
	args := []string{"watch", "--model", model, "--ort-lib", lib, "--backbone", "squeezenet:" + sq, "--unknown", "off", "--debounce", "2",
		"--source", video, "--fps", "0", "--zone", "left=0,0,320,240", "--zone", "right=0.5,0,0.5,1.0"}
	broker := mosquittoBroker(t)
	if broker != "" {
		args = append(args, "--mqtt", broker, "--camera", "yard")
	}
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("watch: %v\n%s", err, out)
	}
	answers, events := map[string][]string{}, map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l struct{ Type, Zone, Answer, Class string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if l.Type == "frame" {
			answers[l.Zone] = append(answers[l.Zone], l.Answer)
		} else if l.Type == "event" {
			events[l.Zone] = append(events[l.Zone], l.Class)
		}
	}
	for zone, want := range map[string][]string{"left": left, "right": right} {
		if !slices.Equal(answers[zone], want) || !slices.Equal(events[zone], slices.Compact(slices.Clone(want))) {
			t.Errorf("zone %s: answers %v, events %v; want %v", zone, answers[zone], events[zone], want)
		}
	}
	if len(answers) != 2 {
		t.Errorf("answers for zones %v, want left and right only", answers)
	}
	if broker != "" {
		got := retained(t, broker, "flycl/yard/left/state", "flycl/yard/right/state", "homeassistant/sensor/flycl_yard/right_answer/config")
		if got["flycl/yard/left/state"] != "tench" || got["flycl/yard/right/state"] != "banana" ||
			!strings.Contains(got["homeassistant/sensor/flycl_yard/right_answer/config"], `"unique_id":"flycl_yard_right_answer"`) {
			t.Fatalf("retained on the broker: %q", got)
		}
	}
}
