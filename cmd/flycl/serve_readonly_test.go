package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/app/server"
)

// TestServeReadOnly: flycl serve --read-only starts on a model file of
// mode 0444 while a writing flycl serve holds its lock, answers
// predictions, refuses a learn with 405, and serves the writer's new
// versions; flags that would change or create a model are refused with
// the input status.
func TestServeReadOnly(t *testing.T) {
	dir := t.TempDir()
	model, feats := filepath.Join(dir, "m.flycl"), filepath.Join(dir, "a.npz")
	blobs(t, feats, 1, 6, 10, "a1", "b2")
	if _, err := runCLI(t, "learn", "--model", model, "--features", feats, "--m", "100", "--p", "3", "--k", "30", "--lambdas", "0.1,1,10"); err != nil {
		t.Fatal(err)
	}
	wurl, _, wstop, err := serveInProcess(t, "--addr", "127.0.0.1:0", "--model", model, "--checkpoint-every", "3")
	if err != nil {
		t.Fatal(err)
	}
	defer wstop()
	if err := os.Chmod(model, 0o444); err != nil {
		t.Fatal(err)
	}
	rurl, rlog, rstop, err := serveInProcess(t, "--addr", "127.0.0.1:0", "--model", model, "--read-only", "--reload-every", "10ms")
	if err != nil {
		t.Fatalf("serve --read-only beside a writer, on a 0444 file: %v", err)
	}
	defer rstop()
	post := func(url string, body any) (int, []byte) {
		b, _ := json.Marshal(body)
		resp, err := http.Post(url, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		return resp.StatusCode, out.Bytes()
	}
	x := [][]float32{{9, 9, 9, 0, 0, 0}, {9, 8, 9, 0, 1, 0}}
	if code, b := post(rurl+"/v1/learn", server.Request{Features: x, Labels: []string{"c3", "c3"}}); code != http.StatusMethodNotAllowed || !strings.Contains(string(b), "read-only") {
		t.Fatalf("learn on a read-only server: %d %s", code, b)
	}
	for step := range 4 {
		code, b := post(wurl+"/v1/learn", server.Request{Features: x, Labels: []string{"c3", "c3"}})
		if code != http.StatusOK {
			t.Fatalf("learn %d on the writer: %d %s", step, code, b)
		}
		var lr server.LearnResponse
		json.Unmarshal(b, &lr)
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, b := post(rurl+"/v1/predict", server.Request{Features: x})
			var pr server.PredictResponse
			if code != http.StatusOK || json.Unmarshal(b, &pr) != nil {
				t.Fatalf("predict on the read-only server: %d %s", code, b)
			}
			if pr.Version == lr.Version {
				if pr.Predictions[0].Class != "c3" {
					t.Fatalf("version %d: predicted %s, want c3", pr.Version, pr.Predictions[0].Class)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the read-only server serves version %d, the writer %d\n%s", pr.Version, lr.Version, rlog)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, flag := range [][]string{{"--inbox", dir}, {"--dim", "6"}, {"--wait"}, {"--checkpoint-every", "2"}} {
		_, err := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--model", model, "--read-only"}, flag...)...)
		if err == nil || exitCode(err) != exitInput || !strings.Contains(err.Error(), flag[0]) {
			t.Errorf("serve --read-only %v: %v (exit %d), want the input status naming the flag", flag, err, exitCode(err))
		}
	}
}
