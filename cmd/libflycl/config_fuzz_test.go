package main

import (
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/deploy"
)

// FuzzModelNew gives flycl_model_new's two inputs, the configuration JSON
// and d, from the fuzzer. Nothing panics; a refusal has the status the
// header documents for it (FLYCL_E_CONFIG for the JSON or its values,
// FLYCL_E_BAD_INPUT for d, FLYCL_E_TOO_LARGE for a model over the memory
// available); and a model that checkModelSize admits under a budget
// allocates, while it is made, no more than the deploy.NewModelBytes it
// counts (with a margin for the model's small parts), so that the check
// keeps its promise of refusing what would not fit before allocating it.
func FuzzModelNew(f *testing.F) {
	for _, s := range []struct {
		js string
		d  int
	}{
		{`{"m":64,"p":4,"k":16}`, 8},
		{`{"m":64,"p":4,"k":16,"lambda_scale":"relative","widen_grid":true}`, 8},
		{`{"m":200,"p":2,"k":50,"lambdas":[0.1,1,10],"gcv":"band","gcv_scope":"all"}`, 4},
		{`{"m":64,"p":8,"k":8,"topk":"magnitude","projection":"sparse","dual":100,"seed":7}`, 16},
		{`{"m":64,"p":4,"k":65}`, 8},
		{`{"m":64,"p":9,"k":16}`, 8},
		{`{"m":64,"unknown":1}`, 8},
		{`{"m":64} {"m":65}`, 8},
		{`{"m":1e9}`, 8},
		{`{"m":-1}`, 8},
		{`{"m":100000,"p":4,"k":8}`, 8},
		{`{"m":2800,"p":4,"k":16}`, 8},                         // 8m² just under the budget
		{`{"m":64,"p":4,"k":16,"projection":"dense"}`, 200000}, // 4md just under it
		{`{"m":64,"p":4,"k":16}`, 1 << 24},
		{`{"m":64,"p":4,"k":16}`, 1 << 40},
		{`{"m":64,"p":4,"k":16,"lambdas":[-1]}`, 8},
		{`{"gcv":"nope"}`, 8},
		{`null`, 8},
		{``, 0},
		{``, -1},
	} {
		f.Add(s.js, s.d)
	}
	const avail = 64 << 20
	f.Fuzz(func(t *testing.T, js string, d int) {
		cfg, err := parseConfig(js)
		if err != nil {
			if statusOf(err) != FLYCL_E_CONFIG {
				t.Fatalf("%q refused with %v (status %d), want FLYCL_E_CONFIG", js, err, statusOf(err))
			}
			return
		}
		if err := checkModelSize(cfg, d, avail); err != nil {
			if s := statusOf(err); s != FLYCL_E_TOO_LARGE && s != FLYCL_E_BAD_INPUT {
				t.Fatalf("d=%d %q: %v (status %d), want FLYCL_E_TOO_LARGE or FLYCL_E_BAD_INPUT", d, js, err, s)
			}
			return
		}
		need := deploy.NewModelBytes(cfg, d) // 0 for negative sizes: refused before anything is made
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := newModel(cfg, d)
		runtime.ReadMemStats(&after)
		if err != nil {
			if s := statusOf(err); s != FLYCL_E_CONFIG && s != FLYCL_E_BAD_INPUT {
				t.Fatalf("d=%d %q: %v (status %d), want FLYCL_E_CONFIG or FLYCL_E_BAD_INPUT", d, js, err, s)
			}
		}
		// The margin: the model's other parts (its configuration, the λ
		// grid, the rejection rule, names) are small beside W and the
		// m×m statistics; 1 MiB is far above them for these sizes.
		if got := int64(after.TotalAlloc - before.TotalAlloc); got > need+1<<20 {
			t.Fatalf("d=%d %q: %d bytes allocated, checkModelSize counted %d", d, js, got, need)
		}
		runtime.KeepAlive(m)
	})
}

// FuzzLearn gives flycl_learn's inputs, as exports.go hands them to the
// model once it has checked the pointers, from the fuzzer: the n×d
// features (d=4), a label a sample into the class names, the names, λ
// and the batch. Nothing panics; a refusal has one of the statuses the
// header gives a learn's bad input (FLYCL_E_BAD_INPUT, a name's
// FLYCL_E_CLASS_NAME, FLYCL_E_TOO_LARGE) and leaves the model as it was
// (online: the mini-batches before the one that failed taken back out,
// so the model knows no class and has no learn to take back); a learn
// that succeeds moves the model one version on (one a batch online),
// knowing every class a sample was labelled with, and is undone by
// unlearn.
func FuzzLearn(f *testing.F) {
	row := func(v ...float32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	four := row(1, 2, 3, 4, 4, 3, 2, 1, 0, 1, 0, 1)
	f.Add(four, []byte{0, 1, 0}, "a,b", 0.0, 0)
	f.Add(four, []byte{0, 1, 2}, "a,b,c", 1.0, 1)
	f.Add(four, []byte{0, 1, 2}, "a,b", 0.0, 0)         // a label past the names
	f.Add(four, []byte{0, 0, 0}, "a,A\u0301,a", 0.0, 0) // a name twice
	f.Add(four, []byte{0, 0, 0}, " a", 0.0, 0)
	f.Add(four, []byte{0, 0, 0}, "a", math.NaN(), 0)
	f.Add(four, []byte{0, 0, 0}, "a", -1.0, -1)
	f.Add(row(1, 2, 3, float32(math.NaN())), []byte{0}, "a", 0.0, 0)
	f.Add(four[:8], []byte{0}, "a", 0.0, 0)
	f.Add([]byte{}, []byte{}, "a", 0.0, 0)
	f.Fuzz(func(t *testing.T, xb, yb []byte, names string, lambda float64, batch int) {
		const d = 4
		r := newRegistry()
		id, err := r.newModel(`{"m":32,"p":2,"k":8,"lambda_scale":"relative"}`, d)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := r.model(id)
		var x []float32
		for i := 0; i+4 <= len(xb); i += 4 {
			x = append(x, math.Float32frombits(binary.LittleEndian.Uint32(xb[i:])))
		}
		n := len(x) / d
		x = x[:n*d]
		y := make([]int32, n)
		for i := range y {
			if i < len(yb) {
				y[i] = int32(int8(yb[i])) // negative labels too
			}
		}
		ns := strings.Split(names, ",")
		version := func() (v uint64) {
			m.read(func(dm *deploy.Model, _ *predictor) error { v = dm.Model.Version(); return nil })
			return v
		}
		_, err = m.learn(x, n, d, y, ns, lambda, batch)
		if err != nil {
			if s := statusOf(err); s != FLYCL_E_BAD_INPUT && s != FLYCL_E_CLASS_NAME && s != FLYCL_E_TOO_LARGE {
				t.Fatalf("refused with %v (status %d)", err, s)
			}
			switch v := version(); {
			case v == 0:
			case batch <= 0:
				t.Fatalf("a refused learn left the model at version %d", v)
			default:
				// online, the mini-batches before the failed one were
				// learned and taken back out: nothing is left to undo
				m.read(func(dm *deploy.Model, _ *predictor) error {
					if dm.Model.Classes().Len() != 0 || dm.Model.Samples() != 0 {
						t.Fatalf("a refused online learn left %v and %d samples", dm.Model.Classes().Names(), dm.Model.Samples())
					}
					return nil
				})
				if err := m.unlearn(); statusOf(err) != FLYCL_E_NO_UNDO {
					t.Fatalf("unlearn after a learn failed at version %d: %v (status %d)", v, err, statusOf(err))
				}
			}
			return
		}
		want := uint64(1)
		if batch > 0 {
			want = uint64((n + batch - 1) / batch)
		}
		if v := version(); v != want {
			t.Fatalf("a learn of %d samples in batches of %d left the model at version %d, want %d", n, batch, v, want)
		}
		m.read(func(dm *deploy.Model, _ *predictor) error {
			for _, l := range y {
				if _, ok := dm.Model.Classes().LabelOf(ns[l]); !ok {
					t.Fatalf("class %q learned but not known", ns[l])
				}
			}
			return nil
		})
		if err := m.unlearn(); err != nil {
			t.Fatalf("unlearn: %v", err)
		}
		if v := version(); v == want {
			t.Fatalf("unlearn left the model at version %d", v)
		}
	})
}
