package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/flycl/flycl/app/store"
)

// TestCLIKills: flycl learn, forget and undo processes on one model file
// killed with SIGKILL at random moments (FLYCL_CLI_KILLS of them, 8 by
// default); after every kill the file loads and its history and model
// move together (soakHistory: no gap, the history replayed gives the
// model, undo --to N gives the history up to N). It prints the counts of
// gaps and wrong undos, which must be 0.
func TestCLIKills(t *testing.T) {
	kills := 8
	if v, err := strconv.Atoi(os.Getenv("FLYCL_CLI_KILLS")); err == nil && v > 0 {
		kills = v
	}
	bin := buildFlycl(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "k.flycl")
	const d = 16
	cfgArgs := []string{"--m", "1000", "--p", "8", "--k", "200", "--lambdas", "1,10,100"}
	r := rand.New(rand.NewPCG(5, 6))
	var gaps, wrong, undoTos, killed, cmds int
	classes := 0
	for round := 0; killed < kills; round++ {
		var args []string
		switch op := r.IntN(4); {
		case op == 0 && classes > 2:
			args = []string{"undo", "--model", model}
		case op == 1 && classes > 3:
			args = []string{"forget", "--model", model, "--class", fmt.Sprintf("k%d", r.IntN(classes))}
		default:
			f := filepath.Join(dir, fmt.Sprintf("k%d.npz", classes))
			blobs(t, f, uint64(classes+1), d, 6, fmt.Sprintf("k%d", classes))
			classes++
			args = append([]string{"learn", "--model", model, "--features", f, "--quiet", "--journal"}, cfgArgs...)
		}
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds++
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Duration(r.IntN(1500)) * time.Millisecond):
			cmd.Process.Kill()
			<-done
			killed++
		}
		f, err := store.Load(model)
		if os.IsNotExist(errUnwrapAll(err)) {
			continue
		}
		if err != nil {
			t.Fatalf("after %s (killed %d): the model does not load: %v", args[0], killed, err)
		}
		g, w, u := soakHistory(t, round, model, f, d, r)
		gaps, wrong, undoTos = gaps+g, wrong+w, undoTos+u
	}
	t.Logf("cli kills: %d commands (learn, forget, undo), %d killed: %d history gaps, %d wrong undos (%d undo --to N done and checked)", cmds, killed, gaps, wrong, undoTos)
	if gaps > 0 || wrong > 0 {
		t.Fatalf("%d history gaps, %d wrong undos", gaps, wrong)
	}
}
