package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// TestHeaderMatches: flycl.h and the Go side agree: every status macro
// has the Go constant's value, every function the header declares is
// exported and no other, and every export reports through call (so
// through guard), but for the three that cannot fail.
func TestHeaderMatches(t *testing.T) {
	h, err := os.ReadFile("flycl.h")
	if err != nil {
		t.Fatal(err)
	}
	defs := regexp.MustCompile(`(?m)^#define (FLYCL_(?:OK|E_[A-Z_]+)) (\d+)`).FindAllStringSubmatch(string(h), -1)
	if len(defs) != len(statusNames) {
		t.Errorf("flycl.h defines %d status codes, the Go side %d", len(defs), len(statusNames))
	}
	for _, d := range defs {
		v, _ := strconv.Atoi(d[2])
		if s, ok := statusNames[d[1]]; !ok || s.code != v {
			t.Errorf("flycl.h: %s = %d, Go: %+v (defined %v)", d[1], v, s, ok)
		}
	}
	decl := regexp.MustCompile(`(?m)^(?:int|void|const char \*)\s*\*?(flycl_[a-z_]+)\(`).FindAllStringSubmatch(string(h), -1)
	var declared []string
	for _, d := range decl {
		declared = append(declared, d[1])
	}
	src, err := os.ReadFile("exports.go")
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, e := range regexp.MustCompile(`(?m)^//export (\w+)`).FindAllStringSubmatch(string(src), -1) {
		exported = append(exported, e[1])
	}
	slices.Sort(declared)
	slices.Sort(exported)
	if !slices.Equal(declared, exported) {
		t.Errorf("flycl.h declares %v\nexports.go exports %v", declared, exported)
	}
	// every export's body reports through call or facts (both guarded),
	// or through a getter helper whose own body does
	guarded := regexp.MustCompile(`^func \w+\([^{]*\{\n\treturn (call|facts|factInt64|modelString)\(`)
	for _, helper := range []string{"factInt64", "modelString"} {
		i := strings.Index(string(src), "\nfunc "+helper+"(")
		if i < 0 || !regexp.MustCompile(`^func \w+\([^{]*\{\n\treturn (call|facts)\(`).MatchString(string(src[i+1:])) {
			t.Errorf("%s does not report through call (a panic could cross into C)", helper)
		}
	}
	noFail := []string{"flycl_abi_version", "flycl_status_name", "flycl_free", "flycl_last_error"}
	for _, part := range strings.Split(string(src), "//export ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		if slices.Contains(noFail, name) {
			continue
		}
		if !guarded.MatchString(body) {
			t.Errorf("%s does not report through call (a panic could cross into C)", name)
		}
	}
}

// TestGuard: a panic becomes FLYCL_E_INTERNAL with its message.
func TestGuard(t *testing.T) {
	err := guard(func() error { var m map[string]int; m["x"] = 1; return nil })
	if statusOf(err) != FLYCL_E_INTERNAL || !strings.Contains(err.Error(), "nil map") {
		t.Errorf("guard: %v (status %d)", err, statusOf(err))
	}
	if err := guard(func() error { return nil }); err != nil {
		t.Errorf("guard of a success: %v", err)
	}
}

// TestRegistry: a freed handle stays invalid, and a call that holds the
// model when it is freed finds it freed, never a nil model.
func TestRegistry(t *testing.T) {
	r := newRegistry()
	id, err := r.newModel(`{"m":64,"p":4,"k":16}`, 8)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.model(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.freeModel(id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.model(id); statusOf(err) != FLYCL_E_HANDLE {
		t.Errorf("a freed handle: %v", err)
	}
	if err := r.freeModel(id); statusOf(err) != FLYCL_E_HANDLE {
		t.Errorf("freed twice: %v", err)
	}
	if err := m.unlearn(); statusOf(err) != FLYCL_E_HANDLE {
		t.Errorf("a call on a freed model: %v", err)
	}
	id2, _ := r.newModel("", 8)
	if id2 == id {
		t.Error("a freed id was given again")
	}
	for _, d := range []int{0, -1} {
		if _, err := r.newModel("", d); statusOf(err) != FLYCL_E_BAD_INPUT || !strings.Contains(err.Error(), fmt.Sprintf("input dimension must be positive, got %d", d)) {
			t.Errorf("d=%d: %v (status %d), want FLYCL_E_BAD_INPUT naming d", d, err, statusOf(err))
		}
	}
	if _, err := r.newModel(`{"m":64,"p":4,"k":65}`, 8); statusOf(err) != FLYCL_E_CONFIG || !strings.Contains(err.Error(), "k 65: must be at most m (m 64)") {
		t.Errorf("k > m: %v (status %d), want FLYCL_E_CONFIG naming k", err, statusOf(err))
	}
	if _, err := r.newModel(`{"m":64,"unknown":1}`, 8); statusOf(err) != FLYCL_E_CONFIG {
		t.Errorf("an unknown key: %v", err)
	}
}

// FuzzLoadBytes: any bytes given to flycl_model_load_bytes give a model
// or FLYCL_E_FORMAT, never a panic; a model that loads saves to bytes
// that load again to the same model.
func FuzzLoadBytes(f *testing.F) {
	dm, err := deploy.New(mustConfig(f, `{"m":32,"p":4,"k":8,"seed":3,"lambda_scale":"relative"}`), 6, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	x := make([]float32, 6*12)
	names := make([]string, 12)
	for i := range x {
		x[i] = float32(i%7) - float32(i%5)*0.5
	}
	for i := range names {
		names[i] = []string{"a", "b", "c"}[i%3]
	}
	var untrained bytes.Buffer
	if err := modelfile.Encode(&untrained, fileView(dm)); err != nil {
		f.Fatal(err)
	}
	if _, err := dm.Learn(ctxBackground, x, names, nil, deploy.LearnOptions{}); err != nil {
		f.Fatal(err)
	}
	var trained bytes.Buffer
	if err := modelfile.Encode(&trained, fileView(dm)); err != nil {
		f.Fatal(err)
	}
	f.Add(untrained.Bytes())
	f.Add(trained.Bytes())
	f.Add([]byte("FLYCLMDL"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m *deploy.Model
		err := guard(func() (err error) { m, err = decodeModel(b); return err })
		if err != nil {
			var se *statusError
			if !errors.As(err, &se) || se.code != FLYCL_E_FORMAT {
				t.Fatalf("bytes refused with %v (status %d), want FLYCL_E_FORMAT", err, statusOf(err))
			}
			return
		}
		var again bytes.Buffer
		if err := modelfile.Encode(&again, fileView(m)); err != nil {
			t.Fatalf("a model that loaded does not save: %v", err)
		}
		m2, err := decodeModel(again.Bytes())
		if err != nil {
			t.Fatalf("a saved model does not load: %v", err)
		}
		if m2.Model.Version() != m.Model.Version() || !slices.Equal(m2.Model.Classes().Names(), m.Model.Classes().Names()) || m2.ID() != m.ID() {
			t.Fatalf("the round trip changed the model")
		}
	})
}

// TestLocking: a change waits for the reads in progress and a read for
// the change in progress (flycl.h's thread safety), while reads run
// together.
func TestLocking(t *testing.T) {
	r := newRegistry()
	id, err := r.newModel(`{"m":64,"p":4,"k":16,"lambda_scale":"relative"}`, 8)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := r.model(id)
	x := make([]float32, 8*6)
	for i := range x {
		x[i] = float32(i%11) - 5
	}
	y := []int32{0, 1, 0, 1, 0, 1}
	learn := func() error {
		_, err := m.learn(slices.Clone(x), 6, 8, y, []string{"a", "b"}, 0, 0)
		return err
	}
	if err := learn(); err != nil {
		t.Fatal(err)
	}
	score := func() error {
		return m.readPred(func(p *predictor) error { return p.scores(ctxBackground, x, make([]float32, 6*2)) })
	}
	// waits reports whether fn is still running with the lock held as
	// hold says, after patience (a call the lock does not hold up ends in
	// far less), then releases the lock and returns fn's error
	waits := func(hold, release func(), fn func() error, patience time.Duration) (bool, error) {
		hold()
		done := make(chan error, 1)
		go func() { done <- fn() }()
		select {
		case err := <-done:
			release()
			return false, err
		case <-time.After(patience):
		}
		release()
		return true, <-done
	}
	const blocked, free = 200 * time.Millisecond, 20 * time.Second
	if w, err := waits(m.mu.RLock, m.mu.RUnlock, learn, blocked); !w || err != nil {
		t.Errorf("a learn during a read: waited %v, %v", w, err)
	}
	if w, err := waits(m.mu.RLock, m.mu.RUnlock, score, free); w || err != nil {
		t.Errorf("a read during a read: waited %v, %v", w, err)
	}
	if w, err := waits(m.mu.Lock, m.mu.Unlock, score, blocked); !w || err != nil {
		t.Errorf("a read during a change: waited %v, %v", w, err)
	}
	if w, err := waits(m.mu.Lock, m.mu.Unlock, m.unlearn, blocked); !w || err != nil {
		t.Errorf("an unlearn during a change: waited %v, %v", w, err)
	}
}
