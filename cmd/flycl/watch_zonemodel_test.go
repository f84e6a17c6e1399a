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

// TestWatchZoneModels: a zone with a model of its own. Two models are
// learned (through SqueezeNet), one on tench and magpie, one on banana
// and volcano; a 640×240 video shows one of the first two on its left
// half and one of the other two on its right. Watched with the first
// model (--model) and a zone per half, the right zone given the second
// model (--zone-model), every answer of each zone is its own half's
// class, the right zone's lines and events carry the second model's
// version, and with --mqtt the right zone's attributes name its model.
func TestWatchZoneModels(t *testing.T) {
	lib, sq := squeezeNet(t)
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	dirA, framesA := watchPhotos(t, ff, map[string]string{"tench": "n01440764_tench.JPEG", "magpie": "n01582220_magpie.JPEG"})
	dirB, framesB := watchPhotos(t, ff, map[string]string{"banana": "n07753592_banana.JPEG", "volcano": "n09472597_volcano.JPEG"})
	tmp := t.TempDir()
	modelA, modelB := filepath.Join(tmp, "fish.flycl"), filepath.Join(tmp, "food.flycl")
	learn := func(model, dir string) {
		t.Helper()
		if out, err := runCLI(t, "learn", "--data", "folder:"+dir, "--backbone", "squeezenet:"+sq, "--model", model, "--ort-lib", lib,
			"--cache", "", "--quiet", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
			t.Fatalf("learn: %v\n%s", err, out)
		}
	}
	learn(modelA, dirA)
	learn(modelB, dirB)
	learn(modelB, dirB) // a second version: the two models' versions differ
	left := []string{"tench", "tench", "tench", "magpie", "magpie", "magpie", "tench", "tench"}
	right := []string{"banana", "banana", "volcano", "volcano", "volcano", "volcano", "banana", "banana"}
	seqDir := t.TempDir()
	for i := range left {
		if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-i", framesA[left[i]], "-i", framesB[right[i]],
			"-filter_complex", "hstack", filepath.Join(seqDir, fmt.Sprintf("%03d.png", i))).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg hstack: %v: %s", err, b)
		}
	}
	video := filepath.Join(t.TempDir(), "clip.avi")
	if b, err := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-framerate", "4", "-i", filepath.Join(seqDir, "%03d.png"),
		"-c:v", "mjpeg", "-q:v", "3", video).CombinedOutput(); err != nil {
		t.Fatalf("make the video: %v: %s", err, b)
	}
	args := []string{"watch", "--model", modelA, "--ort-lib", lib, "--backbone", "squeezenet:" + sq, "--unknown", "off", "--debounce", "2",
		"--source", video, "--fps", "0", "--zone", "left=0,0,320,240", "--zone", "right=0.5,0,0.5,1.0", "--zone-model", "right=" + modelB}
	broker := mosquittoBroker(t)
	if broker != "" {
		args = append(args, "--mqtt", broker, "--camera", "yard")
	}
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("watch: %v\n%s", err, out)
	}
	answers := map[string][]string{}
	versions := map[string]map[uint64]bool{"left": {}, "right": {}}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l struct {
			Type, Zone, Answer string
			ModelVersion       uint64 `json:"model_version"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if l.Type == "frame" {
			answers[l.Zone] = append(answers[l.Zone], l.Answer)
		}
		if l.Type == "frame" || l.Type == "event" {
			versions[l.Zone][l.ModelVersion] = true
		}
	}
	for zone, want := range map[string][]string{"left": left, "right": right} {
		if !slices.Equal(answers[zone], want) {
			t.Errorf("zone %s: answers %v; want %v", zone, answers[zone], want)
		}
	}
	if len(versions["left"]) != 1 || len(versions["right"]) != 1 || fmt.Sprint(versions["left"]) == fmt.Sprint(versions["right"]) {
		t.Errorf("model versions of the lines and events: left %v, right %v; want one each, different", versions["left"], versions["right"])
	}
	if broker != "" {
		got := retained(t, broker, "flycl/yard/right/attributes", "flycl/yard/left/attributes")
		if !strings.Contains(got["flycl/yard/right/attributes"], `"model":"food.flycl"`) || !strings.Contains(got["flycl/yard/left/attributes"], `"model":"fish.flycl"`) {
			t.Fatalf("attributes on the broker: %q", got)
		}
	}
	for _, bad := range [][]string{{"--zone-model", "door=" + modelB}, {"--zone-model", "right"}, {"--zone-model", "right=" + modelB, "--zone-model", "right=" + modelA}} {
		a := append([]string{"watch", "--model", modelA, "--source", video, "--zone", "right=0.5,0,0.5,1.0"}, bad...)
		if out, err := runCLI(t, a...); err == nil || !strings.Contains(err.Error(), "--zone-model") {
			t.Errorf("%q: %v, want an error naming --zone-model\n%s", bad, err, out)
		}
	}
}
