package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// smallModel are the flags of a small model for d=16 feature files.
var smallModel = []string{"--m", "300", "--p", "6", "--k", "60", "--lambdas", "0.1,1,10"}

// learnProc is one "flycl learn" process.
type learnProc struct {
	class string
	cmd   *exec.Cmd
	out   bytes.Buffer
}

// TestConcurrentLearns runs two "flycl learn" processes on one model file
// at the same moment, ten times. Without a lock between them (the defect
// this guards against) both exit 0 and the slower save drops the other's
// class. Now every learn that exits 0 has its class in the file, and one
// that loses the race fails at once with an error naming the holder; with
// --wait both succeed, one after the other.
func TestConcurrentLearns(t *testing.T) {
	bin := buildFlycl(t)
	dir := t.TempDir()
	for _, wait := range []bool{false, true} {
		model := filepath.Join(dir, fmt.Sprintf("race-%v.flycl", wait))
		// the model exists before the races, so that both learns of a
		// round read and rewrite it
		base := filepath.Join(dir, "base.npz")
		blobs(t, base, 1, 16, 6, "base0", "base1")
		if out, err := exec.Command(bin, append([]string{"learn", "--model", model, "--features", base, "--quiet"}, smallModel...)...).CombinedOutput(); err != nil {
			t.Fatalf("first learn: %v\n%s", err, out)
		}
		var acked, refused []string
		for round := range 10 {
			procs := make([]*learnProc, 2)
			for i := range procs {
				class := fmt.Sprintf("r%02d%c", round, 'a'+i)
				f := filepath.Join(dir, class+".npz")
				blobs(t, f, uint64(round*2+i+10), 16, 6, class)
				args := []string{"learn", "--model", model, "--features", f, "--quiet"}
				if wait {
					args = append(args, "--wait=2m")
				}
				p := &learnProc{class: class, cmd: exec.Command(bin, args...)}
				p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
				procs[i] = p
			}
			// start both, then let them run at once
			for _, p := range procs {
				if err := p.cmd.Start(); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range procs {
				err := p.cmd.Wait()
				switch {
				case err == nil:
					acked = append(acked, p.class)
				case wait:
					t.Fatalf("learn %s with --wait failed: %v\n%s", p.class, err, p.out.String())
				case strings.Contains(p.out.String(), "is locked by PID") && strings.Contains(p.out.String(), "flycl learn") && p.cmd.ProcessState.ExitCode() == exitLocked:
					refused = append(refused, p.class)
				default:
					t.Fatalf("learn %s failed without the lock error: %v\n%s", p.class, err, p.out.String())
				}
			}
		}
		m, err := store.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		have := m.Model.Classes().Names()
		for _, c := range acked {
			if !slices.Contains(have, c) {
				t.Errorf("wait=%v: the acknowledged learn of %s is not in the file (classes %v)", wait, c, have)
			}
		}
		for _, c := range refused {
			if slices.Contains(have, c) {
				t.Errorf("wait=%v: the refused learn of %s is in the file", wait, c)
			}
		}
		if want := 2 + len(acked); len(have) != want || int(m.Model.Version()) != 1+len(acked) {
			t.Errorf("wait=%v: %d classes at version %d, want %d at %d", wait, len(have), m.Model.Version(), want, 1+len(acked))
		}
		if wait && len(acked) != 20 {
			t.Errorf("with --wait %d of 20 learns succeeded", len(acked))
		}
		t.Logf("wait=%v: %d acknowledged, %d refused with the lock error", wait, len(acked), len(refused))
	}
}

// TestWritersAndServe: while "flycl serve" runs on a model file, learn,
// forget, merge and a second serve on it fail at once naming the server,
// and the server's own acknowledged learns are all in the file; predict
// reads it meanwhile (no lock). Once the server stops, learn works.
func TestWritersAndServe(t *testing.T) {
	bin := buildFlycl(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	srv, url, log := startServe(t, bin, append([]string{"--model", model, "--dim", "16"}, smallModel...)...)
	defer srv.Process.Kill()
	r := rand.New(rand.NewPCG(3, 4))
	client := &http.Client{Timeout: time.Minute}
	for i := range 3 {
		if !learnOnce(client, url, fmt.Sprintf("served%d", i), r) {
			t.Fatalf("learn over HTTP failed\n%s", log)
		}
	}
	f := filepath.Join(dir, "cli.npz")
	blobs(t, f, 5, 16, 6, "cli0")
	for _, args := range [][]string{
		{"learn", "--model", model, "--features", f, "--quiet"},
		{"forget", "--model", model, "--class", "served0"},
		{"serve", "--model", model, "--addr", "127.0.0.1:0"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "is locked by PID") || !strings.Contains(string(out), "flycl serve") {
			t.Errorf("%s while serving: %v\n%s", args[0], err, out)
		}
	}
	// a reader needs no lock
	if out, err := exec.Command(bin, "info", "--model", model).CombinedOutput(); err != nil {
		t.Errorf("info while serving: %v\n%s", err, out)
	}
	// --wait gives up after its time, naming the holder
	out, err := exec.Command(bin, "learn", "--model", model, "--features", f, "--quiet", "--wait=300ms").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "waited") {
		t.Errorf("learn --wait 300ms while serving: %v\n%s", err, out)
	}
	// a learn waiting without limit goes through once the server stops
	waiting := exec.Command(bin, "learn", "--model", model, "--features", f, "--quiet", "--wait")
	var wout bytes.Buffer
	waiting.Stdout, waiting.Stderr = &wout, &wout
	if err := waiting.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { waiting.Process.Kill() }) // (a failed test leaves no process behind)
	time.Sleep(200 * time.Millisecond)
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	if err := waiting.Wait(); err != nil {
		t.Fatalf("learn --wait after the server stopped: %v\n%s", err, wout.String())
	}
	m, err := store.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Model.Classes().Names(), ","); got != "served0,served1,served2,cli0" || m.Model.Version() != 4 {
		t.Fatalf("model after serve and learn: version %d, classes %s", m.Model.Version(), got)
	}
}

// TestFileReplacedUnderServer: a model file replaced behind a running
// server (a copy of another model over it, by a program that ignores the
// lock) is neither overwritten nor read back: learns get 503 saying so,
// /v1/healthz turns 503 "read-only", the file keeps the other model, and
// predictions go on from the server's last version.
func TestFileReplacedUnderServer(t *testing.T) {
	bin := buildFlycl(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	other := filepath.Join(dir, "other.flycl")
	f := filepath.Join(dir, "other.npz")
	blobs(t, f, 7, 16, 6, "other0", "other1", "other2")
	if out, err := exec.Command(bin, append([]string{"learn", "--model", other, "--features", f, "--quiet"}, smallModel...)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srv, url, log := startServe(t, bin, append([]string{"--model", model, "--dim", "16"}, smallModel...)...)
	defer srv.Process.Kill()
	r := rand.New(rand.NewPCG(5, 6))
	client := &http.Client{Timeout: time.Minute}
	if !learnOnce(client, url, "mine", r) {
		t.Fatalf("learn failed\n%s", log)
	}
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	// cp other.flycl m.flycl: the same inode, other bytes
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if learnOnce(client, url, "after", r) {
		t.Fatalf("a learn over a replaced file was acknowledged\n%s", log)
	}
	c := api.NewClient(url, "")
	c.HTTP = client
	h, err := c.Healthz(context.Background())
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || h == nil || h.Status != "read-only" || h.Writable || !strings.Contains(h.Error, "changed behind") {
		t.Fatalf("healthz after the file was replaced: %+v %v", h, err)
	}
	if pr, err := c.Predict(context.Background(), api.Request{Features: [][]float32{make([]float32, 16)}}); err != nil || pr.Version != 1 {
		t.Fatalf("predict after the file was replaced: %v, %+v", err, pr)
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	if !strings.Contains(log.String(), "changed behind") {
		t.Errorf("the log does not say the file was changed:\n%s", log)
	}
	// the served model's journal stays beside the copied file: a load
	// refuses it (it is another model's), naming the command that gets
	// out; after it the file is the other model, untouched
	if _, err := store.Load(model); !errors.Is(err, modelfile.ErrForeignJournal) || !strings.Contains(err.Error(), "flycl repair --model "+model) {
		t.Fatalf("a load of the copied file beside the server's journal: %v", err)
	}
	if out, err := exec.Command(bin, "repair", "--model", model).CombinedOutput(); err != nil || !strings.Contains(string(out), "moved the journal aside") {
		t.Fatalf("repair: %v\n%s", err, out)
	}
	if m, err := store.Load(model); err != nil || strings.Join(m.Model.Classes().Names(), ",") != "other0,other1,other2" {
		t.Fatalf("the replaced file was changed: %v", err)
	}
}

// TestExitCodes: the exit status tells a locked model file (3) and
// refused input (2) from other failures (1), through the library's typed
// errors.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	lk, err := modelfile.TakeLock(context.Background(), model, modelfile.LockOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = modelfile.TakeLock(context.Background(), model, modelfile.LockOptions{})
	lk.Unlock()
	for _, c := range []struct {
		err  error
		want int
	}{
		{err, exitLocked},
		{fmt.Errorf("learn: %w", err), exitLocked},
		{fmt.Errorf("learn: %w", flycl.ErrBadInput), exitInput},
		{fmt.Errorf("learn: %w", flycl.ErrTooLarge), exitInput},
		{flycl.CheckClassName("a\u200b"), exitInput},
		{flycl.ErrNotTrained, exitFailure},
		{io.ErrUnexpectedEOF, exitFailure},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
