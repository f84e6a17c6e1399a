package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flycl/flycl/app/server"
)

// TestServeInboxFlags: the inbox's flags are checked before serve
// listens, and are refused without --inbox.
func TestServeInboxFlags(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new.flycl")
	ib := filepath.Join(dir, "inbox")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--inbox", ib, "--inbox-max-items", "0"}, "--inbox-max-items 0"},
		{[]string{"--inbox", ib, "--inbox-max-bytes", "-1"}, "--inbox-max-bytes -1"},
		{[]string{"--inbox", ib, "--inbox-below", "1.5"}, "--inbox-below 1.5"},
		{[]string{"--inbox", ib, "--inbox-below", "0"}, "--inbox-below 0"},
		{[]string{"--inbox", ib, "--inbox-margin", "-2"}, "--inbox-margin -2"},
		{[]string{"--inbox-max-items", "10"}, "give --inbox DIR"},
		{[]string{"--inbox-below", "0.9"}, "give --inbox DIR"},
	} {
		_, err := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--model", fresh, "--dim", "4", "--p", "3"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// TestServeInbox runs the binary with --inbox: a doubtful prediction is
// kept, a second server shares the folder (it lists the item), and a restarted server
// lists the item again.
func TestServeInbox(t *testing.T) {
	bin := buildFlycl(t)
	dir := t.TempDir()
	model, ib := filepath.Join(dir, "m.flycl"), filepath.Join(dir, "inbox")
	args := []string{"--model", model, "--dim", "4", "--m", "200", "--p", "3", "--k", "40", "--unknown", "off", "--inbox", ib, "--inbox-max-items", "5", "--inbox-below", "1"}
	cmd, url, log := startServe(t, bin, args...)
	post := func(path string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		resp, err := http.Post(url+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d\n%s", path, resp.StatusCode, log)
		}
	}
	post("/v1/learn", server.Request{Features: [][]float32{{4, 0, 0, 0}, {3.8, 0.1, 0, 0}, {0, 4, 0, 0}, {0.1, 3.9, 0, 0}}, Labels: []string{"a", "a", "b", "b"}})
	// halfway between a and b; --inbox-below 1 keeps every prediction
	// short of certainty (what the calibration makes of four samples is
	// not this test's subject)
	post("/v1/predict", server.Request{Features: [][]float32{{2, 2, 0, 0}}})
	var ir server.InboxResponse
	// The keeper stores it in the background: poll, for at most a minute
	// (a bound on a hang, not a measurement).
	for start := time.Now(); ; {
		if err := getJSON(url+"/v1/inbox", &ir); err != nil {
			t.Fatal(err)
		}
		if ir.Count > 0 {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("no item in the inbox after a minute\n%s", log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ir.Count != 1 || ir.Items[0].Dim != 4 || (ir.Items[0].Guess != "a" && ir.Items[0].Guess != "b") {
		t.Fatalf("inbox %+v\n%s", ir, log)
	}
	// a second server on another model shares the folder (as flycl watch
	// does): it lists the item the first one kept
	other, otherURL, otherLog := startServe(t, bin, "--model", filepath.Join(dir, "other.flycl"), "--dim", "4", "--p", "3", "--inbox", ib)
	var io server.InboxResponse
	err := getJSON(otherURL+"/v1/inbox", &io)
	other.Process.Signal(syscall.SIGTERM)
	other.Wait()
	if err != nil || io.Count != 1 || io.Items[0].ID != ir.Items[0].ID {
		t.Fatalf("a second server on the same inbox lists %+v %v, want the item the first kept\n%s", io, err, otherLog)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	cmd2, url2, log2 := startServe(t, bin, args...)
	defer func() { cmd2.Process.Signal(syscall.SIGTERM); cmd2.Wait() }()
	var ir2 server.InboxResponse
	if err := getJSON(url2+"/v1/inbox", &ir2); err != nil || ir2.Count != 1 || ir2.Items[0].ID != ir.Items[0].ID {
		t.Fatalf("after a restart: %+v %v\n%s", ir2, err, log2)
	}
}
