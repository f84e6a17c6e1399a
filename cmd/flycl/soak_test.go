package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
)

// soakOp is one change a client asked the server for, in the order the
// server applied it (the test lets one change be in flight at a time, so
// the clients' order is the server's).
type soakOp struct {
	learn bool
	undo  bool // an undo of the learn just before it (class: its class)
	class string
	x     []float32 // n×d, for a learn
	state string    // "acked", "refused" (an answer other than 200) or "unknown" (no answer: the kill)
	exact bool      // a forget the server answered exact (from its journal)
}

// TestSoak runs "flycl serve" under concurrent predicts, learns and
// forgets from several clients, kills it with SIGKILL at random moments
// and restarts it, with a window of a full disk (a small tmpfs, when this
// process may mount one), a round that starts while another writer
// holds the model file's lock, rounds whose lock file is removed or whose
// journal is replaced under the running server (it must turn read-only),
// and after every kill a torn journal tail of what a power loss leaves
// (zero bytes, a record cut short). After every kill: the file loads; every
// acknowledged change is in it and nothing refused is; versions only
// grow; and the model equals one rebuilt in this process from the changes
// that took effect (the acknowledged ones, plus any whose answer the kill
// cut off after its save): the same classes, version, λ, G and S to the
// bit, and the same predictions.
//
// FLYCL_SOAK_ROUNDS sets the number of kills (default 4; make soak runs
// 40). The counts are logged at the end.
func TestSoak(t *testing.T) {
	rounds := 4
	if v, err := strconv.Atoi(os.Getenv("FLYCL_SOAK_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	bin := buildFlycl(t)
	dir := t.TempDir()
	// a small tmpfs for the model, to fill up for one round
	tmpfs := ""
	if os.Geteuid() == 0 {
		mnt := filepath.Join(dir, "disk")
		os.Mkdir(mnt, 0o755)
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", mnt).CombinedOutput(); err == nil {
			tmpfs = mnt
			t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
		} else {
			t.Logf("no tmpfs (%v: %s): the full-disk window is left out", err, bytes.TrimSpace(out))
		}
	} else {
		t.Log("not root: no tmpfs, so the full-disk window is left out")
	}
	modelDir := dir
	if tmpfs != "" {
		modelDir = tmpfs
	}
	model := filepath.Join(modelDir, "soak.flycl")
	const d = 16
	args := []string{"--model", model, "--dim", strconv.Itoa(d), "--m", "1000", "--p", "8", "--k", "200", "--lambdas", "1,10,100"}
	r := rand.New(rand.NewPCG(11, 12))
	var (
		ops                                  []soakOp
		requests, kills, lockRefusals, fulls int
		tampers, tornTails                   int
		undos, gaps, wrongUndos, undoTos     int
		lastVersion                          uint64
		checked, rebuilt                     int
		rb                                   *server.FileBackend
	)
	next := 0
	for round := range rounds {
		// one round starts while another writer holds the file
		if round == 1 {
			lk, err := modelfile.TakeLock(context.Background(), model, modelfile.LockOptions{Command: "the soak test"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...).CombinedOutput()
			if err == nil || !bytes.Contains(out, []byte("the soak test")) {
				t.Fatalf("serve on a locked model: %v\n%s", err, out)
			}
			lockRefusals++
			lk.Unlock()
		}
		cmd, url, log := startServe(t, bin, args...)
		// a full disk for one round: the saves fail, the learns are refused
		full := tmpfs != "" && round == 2
		filler := filepath.Join(modelDir, "filler")
		if full {
			var st syscall.Statfs_t
			if err := syscall.Statfs(tmpfs, &st); err != nil {
				t.Fatal(err)
			}
			free := int64(st.Bavail) * st.Bsize
			if err := os.WriteFile(filler, make([]byte, max(0, free-64<<10)), 0o644); err != nil {
				t.Logf("filler: %v", err)
			}
			fulls++
		}
		var mu sync.Mutex // one change in flight at a time; guards ops, next, requests
		stop := make(chan struct{})
		var wg sync.WaitGroup
		change := func(client *http.Client, rr *rand.Rand) bool {
			mu.Lock()
			defer mu.Unlock()
			// forget only classes whose learn was acknowledged, so that
			// whether a learn cut off by a kill took effect can be read
			// off the file (its class is there or not)
			var acked []string
			for i, o := range ops {
				if o.state == "acked" && o.learn && !slices.ContainsFunc(ops[i+1:], func(u soakOp) bool { return u.undo && u.class == o.class && u.state != "refused" }) {
					acked = append(acked, o.class)
				}
			}
			op := soakOp{learn: true}
			// an undo right after an acknowledged learn takes that learn
			// back (the changes are one at a time): which one it took
			// is then read off its answer, or off the file
			if n := len(ops); n > 0 && ops[n-1].learn && ops[n-1].state == "acked" && rr.IntN(4) == 0 {
				op = soakOp{undo: true, class: ops[n-1].class}
			} else if len(acked) > 3 && rr.IntN(4) == 0 {
				op = soakOp{class: acked[rr.IntN(len(acked))]}
			} else {
				op.class = fmt.Sprintf("s%d", next)
				next++
				op.x = make([]float32, 6*d)
				for i := range op.x {
					op.x[i] = float32(rr.NormFloat64()) + float32(next%5)
				}
			}
			var req *http.Request
			if op.undo {
				req, _ = http.NewRequest("POST", url+"/v1/model/undo", strings.NewReader("{}"))
				req.Header.Set("Content-Type", "application/json")
			} else if op.learn {
				rows := make([][]float32, 6)
				for i := range rows {
					rows[i] = op.x[i*d : (i+1)*d]
				}
				b, _ := json.Marshal(server.Request{Features: rows, Label: op.class})
				req, _ = http.NewRequest("POST", url+"/v1/learn", bytes.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
			} else {
				req, _ = http.NewRequest("DELETE", url+"/v1/classes/"+op.class, nil)
			}
			requests++
			resp, err := client.Do(req)
			switch {
			case err != nil:
				op.state = "unknown"
			case resp.StatusCode == 200:
				op.state = "acked"
				if op.undo {
					undos++
					var ur server.UndoResponse
					json.NewDecoder(resp.Body).Decode(&ur)
					if len(ur.Undone) != 1 || !slices.Equal(ur.Undone[0].Classes, []string{op.class}) {
						wrongUndos++
						t.Errorf("an undo right after the learn of %s took back %+v", op.class, ur.Undone)
					}
				} else if !op.learn {
					var fr server.ForgetResponse
					json.NewDecoder(resp.Body).Decode(&fr)
					op.exact = fr.Exact
				}
			default:
				op.state = "refused"
			}
			if resp != nil {
				resp.Body.Close()
			}
			// a forget of a class already gone (an earlier unknown forget
			// that took effect) is refused with 404 and changes nothing
			ops = append(ops, op)
			return err == nil
		}
		for w := range 2 { // two clients that change the model
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{}
				rr := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				for {
					select {
					case <-stop:
						return
					default:
					}
					if !change(client, rr) {
						return
					}
				}
			}()
		}
		for w := range 2 { // two clients that predict; versions only grow
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{}
				var seen uint64
				body, _ := json.Marshal(server.Request{Features: [][]float32{make([]float32, d)}})
				for {
					select {
					case <-stop:
						return
					default:
					}
					resp, err := client.Post(url+"/v1/predict", "application/json", bytes.NewReader(body))
					if err != nil {
						return
					}
					var pr server.PredictResponse
					json.NewDecoder(resp.Body).Decode(&pr)
					resp.Body.Close()
					mu.Lock()
					requests++
					mu.Unlock()
					if resp.StatusCode == 200 {
						if pr.Version < seen {
							t.Errorf("predict client %d: version %d after %d", w, pr.Version, seen)
						}
						seen = pr.Version
					}
				}
			}()
		}
		wait := time.Duration(200+r.IntN(800)) * time.Millisecond
		time.Sleep(wait / 2)
		// Tampering behind the running server, between two changes (the
		// journal copied while no change is in flight loses nothing): the
		// lock file removed, or the journal replaced by a copy of itself.
		// The server must turn read-only (healthz 503 naming what
		// happened) and refuse the changes from then on.
		tamper := ""
		switch {
		case round%4 == 3:
			tamper = "lock file"
			mu.Lock()
			os.Remove(modelfile.LockPath(model))
			mu.Unlock()
		case round%4 == 1 && !full:
			jp := modelfile.JournalPath(model)
			mu.Lock()
			if b, err := os.ReadFile(jp); err == nil && os.WriteFile(jp+".copy", b, 0o644) == nil && os.Rename(jp+".copy", jp) == nil {
				tamper = "journal"
			}
			mu.Unlock()
		}
		if tamper != "" {
			if !soakReadOnly(url, tamper) {
				t.Fatalf("round %d: the server did not turn read-only after its %s was replaced or removed\n%s", round, tamper, log)
			}
			tampers++
		}
		time.Sleep(wait / 2)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		kills++
		close(stop)
		wg.Wait()
		if full {
			os.Remove(filler)
		}
		// What a power loss leaves at the end of the journal (a write
		// never acknowledged): zero bytes, or a record cut short. The load
		// below ignores it, and the next round's server cuts it off.
		if jf, err := os.OpenFile(modelfile.JournalPath(model), os.O_WRONLY|os.O_APPEND, 0); err == nil {
			tail := make([]byte, 4096) // zero-filled
			if round%2 == 1 {
				tail = []byte{200, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7} // a length past the end
			}
			if _, err := jf.Write(tail); err == nil {
				tornTails++
			}
			jf.Close()
		}

		// The file after the kill.
		f, err := store.Load(model)
		if os.IsNotExist(errUnwrapAll(err)) && !slices.ContainsFunc(ops, func(o soakOp) bool { return o.state == "acked" }) {
			continue
		}
		if err != nil {
			t.Fatalf("round %d: the model does not load after kill -9: %v\n%s", round, err, log)
		}
		if v := f.Model.Version(); v < lastVersion {
			t.Fatalf("round %d: version %d after %d", round, v, lastVersion)
		} else {
			lastVersion = v
		}
		// History and model move together: the history ends at the
		// model's version with no gap, replaying it gives the model, and
		// undo --to N gives the model as it was at N.
		hg, hu, ht := soakHistory(t, round, model, f, d, r)
		gaps += hg
		wrongUndos += hu
		undoTos += ht
		have := f.Model.Classes().Names()
		// Which changes took effect: the acknowledged ones must have, the
		// refused ones must not; an unknown one is read off the file
		// (a learn took effect if its class is there or was forgotten by
		// a later change that took effect).
		applied := make([]bool, len(ops))
		present := map[string]bool{}
		for _, n := range have {
			present[n] = true
		}
		for i := len(ops) - 1; i >= 0; i-- {
			o := ops[i]
			switch {
			case o.state == "refused":
				if o.learn && present[o.class] && !learnedElsewhere(ops, i, o.class) {
					t.Fatalf("round %d: the refused learn of %s is in the file", round, o.class)
				}
			case o.undo:
				applied[i] = o.state != "refused" && !present[o.class]
				if o.state == "acked" && !applied[i] {
					wrongUndos++
					t.Fatalf("round %d: the acknowledged undo of the learn of %s did not take", round, o.class)
				}
			case o.learn:
				forgotten := o.state == "acked" && slices.ContainsFunc(ops[i+1:], func(f soakOp) bool { return !f.learn && !f.undo && f.class == o.class && f.state != "refused" })
				for j := i + 1; j < len(ops); j++ {
					forgotten = forgotten || (ops[j].undo && ops[j].class == o.class && applied[j])
				}
				applied[i] = present[o.class] || forgotten
				if o.state == "acked" && !applied[i] {
					t.Fatalf("round %d: the acknowledged learn of %s is not in the file", round, o.class)
				}
			default: // forget
				// (one cut off by a kill did not take effect if a later
				// forget of the class was acknowledged: that one would
				// have been answered 404)
				applied[i] = !present[o.class] && (o.state == "acked" ||
					!slices.ContainsFunc(ops[i+1:], func(f soakOp) bool { return !f.learn && !f.undo && f.class == o.class && f.state == "acked" }))
				if o.state == "acked" && !applied[i] {
					t.Fatalf("round %d: the acknowledged forget of %s did not take", round, o.class)
				}
			}
		}
		// Rebuild from the changes that took effect, in order: the
		// rebuild goes on from the last round's (whether an earlier change
		// took effect was settled at its round's check).
		if rb == nil {
			if rb, err = server.OpenFileWith(context.Background(), filepath.Join(dir, "rebuild.flycl"), server.FileOptions{
				Create: func() (*flycl.Model, error) { return flycl.New(f.Model.Config(), d) }, Checkpoints: server.Checkpoints{Entries: 1}}); err != nil {
				t.Fatal(err)
			}
			defer func() { rb.Close() }()
		}
		for i := rebuilt; i < len(ops); i++ {
			o := ops[i]
			if !applied[i] {
				continue
			}
			if o.undo {
				_, undone, err := rb.Undo(context.Background(), store.Undo{})
				if err != nil || len(undone) != 1 || !slices.Equal(undone[0].Classes, []string{o.class}) {
					t.Fatalf("rebuild: undo the learn of %s: %v %+v", o.class, err, undone)
				}
				continue
			}
			if o.learn {
				names := slices.Repeat([]string{o.class}, len(o.x)/d)
				if _, _, err := rb.Learn(context.Background(), o.x, names, deploy.LearnOptions{}); err != nil {
					t.Fatalf("rebuild: learn %s: %v", o.class, err)
				}
				continue
			}
			// a forget cut off by a kill, of a class an earlier forget
			// removed, was answered 404 and changed nothing
			if o.state != "acked" && !slices.ContainsFunc(rb.Current().Classes(), func(c server.Class) bool { return c.Name == o.class }) {
				continue
			}
			// exactly, with the class's data, when the server forgot it
			// exactly from its journal (one cut off by the kill: when the
			// file lost the class's samples)
			var xs []float32
			learnOf := ops[slices.IndexFunc(ops, func(l soakOp) bool { return l.learn && l.class == o.class })]
			exact := o.exact
			if o.state != "acked" {
				exact = f.Model.Samples() == rb.Current().Info().Samples-len(learnOf.x)/d
			}
			if exact {
				xs = learnOf.x
			}
			if _, err := rb.Forget(context.Background(), o.class, xs); err != nil {
				t.Fatalf("rebuild: forget %s: %v", o.class, err)
			}
		}
		rebuilt = len(ops)
		g, err := store.Load(filepath.Join(dir, "rebuild.flycl"))
		if err != nil && rebuilt > 0 && !os.IsNotExist(errUnwrapAll(err)) {
			t.Fatal(err)
		}
		if g == nil {
			continue
		}
		sameSoakModel(t, round, f, g)
		checked++
	}
	var acked, refused, unknown int
	for _, o := range ops {
		switch o.state {
		case "acked":
			acked++
		case "refused":
			refused++
		default:
			unknown++
		}
	}
	t.Logf("soak: %d requests, %d kills, %d changes acknowledged, %d refused, %d cut off by a kill, %d full-disk rounds, %d starts refused by the lock, %d lock files or journals changed under the server, %d torn journal tails, %d checks of the file against a rebuild",
		requests, kills, acked, refused, unknown, fulls, lockRefusals, tampers, tornTails, checked)
	t.Logf("soak: %d undos acknowledged; after %d kills: %d history gaps, %d wrong undos (%d undo --to N done and checked)", undos, kills, gaps, wrongUndos, undoTos)
	if gaps > 0 || wrongUndos > 0 {
		t.Fatalf("%d history gaps, %d wrong undos", gaps, wrongUndos)
	}
	if acked == 0 || checked == 0 {
		t.Fatalf("nothing was checked: %d acknowledged, %d checks", acked, checked)
	}
}

// soakHistory checks, after a kill, that the history of the model file
// at path and its model f move together: the history ends at f's
// version with no gap; when it reaches back to the model's creation
// (not cut at the history's bound), replaying it on a new model gives f
// (G and S to the bit); and undo --to N (N a random version the history
// records, one it can reach when there is one, on a copy of the file)
// either is refused or gives the model the history up to N replayed
// gives. It returns the gaps and wrong
// undos it found (reported with t.Errorf).
func soakHistory(t *testing.T, round int, path string, f *deploy.Model, d int, r *rand.Rand) (gaps, wrong, undoTos int) {
	t.Helper()
	hist, err := modelfile.ReadHistory(path, f.ID())
	if err != nil {
		t.Fatalf("round %d: history: %v", round, err)
	}
	if len(hist) == 0 {
		return 0, 0, 0
	}
	if last := hist[len(hist)-1].Version; last != f.Model.Version() || store.Unbroken(hist) != 0 {
		t.Errorf("round %d: the history ends at version %d with a gap before entry %d, the model is at %d", round, last, store.Unbroken(hist), f.Model.Version())
		return 1, 0, 0
	}
	if hist[0].VersionBefore != 0 {
		return 0, 0, 0 // cut at the history's bound: no replay from the start
	}
	// one replay of the whole history, noting the classes and samples at
	// version n on the way: the truth for undo --to n
	// N: a version an undo can reach (after the last forget, and no undo
	// after it of a learn at or before it), when there is one
	var reach []uint64
	for i, e := range hist {
		if slices.ContainsFunc(hist[i+1:], func(l *modelfile.JournalEntry) bool {
			return (l.Op != "learn" && l.Op != "unlearn") || (l.Op == "unlearn" && l.Undoes <= e.Version)
		}) {
			continue
		}
		reach = append(reach, e.Version)
	}
	n := hist[r.IntN(len(hist))].Version
	if len(reach) > 0 {
		n = reach[r.IntN(len(reach))]
	}
	m, err := deploy.New(f.Model.Config(), d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wantNames []string
	wantSamples := 0
	for _, e := range hist {
		if err := store.Replay(context.Background(), m, e); err != nil {
			t.Fatalf("round %d: replay the history: %v", round, err)
		}
		if e.Version == n {
			wantNames, wantSamples = slices.Clone(m.Model.Classes().Names()), m.Model.Samples()
		}
	}
	sameSoakModel(t, round, f, m)
	// undo --to n on a copy
	dir := t.TempDir()
	cp := filepath.Join(dir, "copy.flycl")
	for _, p := range []string{path, modelfile.JournalPath(path)} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "copy.flycl"+strings.TrimPrefix(p, path)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runCLI(t, "undo", "--model", cp, "--to", strconv.FormatUint(n, 10))
	if err != nil {
		if strings.Contains(out, "as it was") {
			t.Errorf("round %d: a refused undo --to %d says %q", round, n, out)
			return 0, 1, 1
		}
		return 0, 0, 0 // refused (a forget or an undo after N)
	}
	got, err := store.Load(cp)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Model.Classes().Names(), wantNames) || got.Model.Samples() != wantSamples {
		t.Errorf("round %d: undo --to %d gives %v (%d samples), the history up to %d %v (%d)", round, n, got.Model.Classes().Names(), got.Model.Samples(), n, wantNames, wantSamples)
		return 0, 1, 1
	}
	return 0, 0, 1
}

// soakReadOnly reports whether the server at url turns read-only within
// 5 s, its healthz (503) naming what (the "lock file" or "journal").
func soakReadOnly(url, what string) bool {
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := client.Get(url + "/v1/healthz")
		if err != nil {
			return false
		}
		var h api.Health
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && !h.Writable && strings.Contains(h.Error, what) {
			return true
		}
	}
	return false
}

// learnedElsewhere reports whether another learn of class than ops[i]
// took place (a class name is used by one learn only, so never).
func learnedElsewhere(ops []soakOp, i int, class string) bool {
	for j, o := range ops {
		if j != i && o.learn && o.class == class && o.state != "refused" {
			return true
		}
	}
	return false
}

// sameSoakModel compares the served file with the rebuild: the same
// classes, version and λ, G and S to the bit (both summed the same rows in
// the same order), a classifier that solves that system as a Cholesky
// solve does, and the same top-1 prediction on probe vectors.
func sameSoakModel(t *testing.T, round int, f, g *deploy.Model) {
	t.Helper()
	if !slices.Equal(f.Model.Classes().Names(), g.Model.Classes().Names()) || f.Model.Version() != g.Model.Version() || f.Model.Lambda() != g.Model.Lambda() || f.Model.Samples() != g.Model.Samples() {
		t.Fatalf("round %d: file %v v%d λ=%g n=%d, rebuild %v v%d λ=%g n=%d", round,
			f.Model.Classes().Names(), f.Model.Version(), f.Model.Lambda(), f.Model.Samples(), g.Model.Classes().Names(), g.Model.Version(), g.Model.Lambda(), g.Model.Samples())
	}
	sf, sg := f.Model.Snapshot(), g.Model.Snapshot()
	for i := range f.Model.Config().M {
		if !slices.Equal(codec.LowerRow(sf, i), codec.LowerRow(sg, i)) {
			t.Fatalf("round %d: G row %d differs", round, i)
		}
	}
	if !slices.Equal(sf.S(), sg.S()) {
		t.Fatalf("round %d: S differs", round)
	}
	if len(f.Model.Classes().Names()) == 0 {
		return
	}
	// C: G, S and λ are the rebuild's to the bit, so the file's classifier
	// must solve that system: a backward-stable Cholesky solve leaves a
	// residual ‖(G+λI)c − s‖ ≤ 4·m·u·(‖G‖₂+λ)·‖c‖ per class (Higham,
	// Thm 10.4, with ‖G‖₂ ≤ trace G), whichever factor (fresh, updated, or
	// refactored after a restart) gave it.
	m := f.Model.Config().M
	lambda := f.Model.Lambda()
	rows := make([][]float32, m)
	trace := 0.0
	for i := range m {
		rows[i] = codec.LowerRow(sf, i)
		trace += float64(rows[i][i])
	}
	gij := func(i, j int) float64 {
		if j > i {
			i, j = j, i
		}
		return float64(rows[i][j])
	}
	coef, rhs := sf.Coef(), sf.S()
	u := 0x1p-24
	for c := 0; c < len(f.Model.Classes().Names()); c++ {
		cc, sc := coef[c*m:(c+1)*m], rhs[c*m:(c+1)*m]
		var r2, c2 float64
		for i := range m {
			v := lambda * float64(cc[i])
			for j := range m {
				v += gij(i, j) * float64(cc[j])
			}
			d := v - float64(sc[i])
			r2 += d * d
			c2 += float64(cc[i]) * float64(cc[i])
		}
		if bound := 4 * float64(m) * u * (trace + lambda) * math.Sqrt(c2); math.Sqrt(r2) > bound {
			t.Fatalf("round %d: class %d: the file's classifier leaves a residual %.3g, more than a Cholesky solve's %.3g", round, c, math.Sqrt(r2), bound)
		}
	}
	// Predictions: the two classifiers differ by at most about m·u·κ
	// relative, κ ≤ (trace G + λ)/λ; a probe whose top two scores are
	// farther apart than that has the same top-1 in both.
	tol := float64(m) * u * (trace + lambda) / lambda
	r := rand.New(rand.NewPCG(uint64(round), 99))
	x := make([]float32, 50*f.Model.InputDim())
	for i := range x {
		x[i] = float32(r.NormFloat64()) + 2
	}
	a, err := f.Model.Predictor().Scores(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Model.Predictor().Scores(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	nc := len(f.Model.Classes().Names())
	scale := 0.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := 0; i < len(a)/nc; i++ {
		ra, rb := a[i*nc:(i+1)*nc], b[i*nc:(i+1)*nc]
		top := argmax(rb)
		second := math.Inf(-1)
		for j, v := range rb {
			if j != top {
				second = math.Max(second, float64(v))
			}
		}
		if float64(rb[top])-second > 2*tol*scale && argmax(ra) != top {
			t.Fatalf("round %d: probe %d: top-1 %d in the file, %d in the rebuild (margin %.3g, tolerance %.3g)", round, i, argmax(ra), top, float64(rb[top])-second, tol*scale)
		}
	}
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
