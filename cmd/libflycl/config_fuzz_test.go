package main

import (
	"cmp"
	"runtime"
	"testing"

	"github.com/flycl/flycl"
)

// FuzzModelNew gives flycl_model_new's two inputs, the configuration JSON
// and d, from the fuzzer. Nothing panics; a refusal has the status the
// header documents for it (FLYCL_E_CONFIG for the JSON or its values,
// FLYCL_E_BAD_INPUT for d, FLYCL_E_TOO_LARGE for a model over the memory
// available); and a model that checkModelSize admits under a budget
// allocates, while it is made, no more than the modelBytes that check
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
		def := flycl.DefaultConfig()
		need := int64(0) // negative sizes: refused before anything is made
		if mm, p := cmp.Or(cfg.M, def.M), cmp.Or(cfg.P, def.P); mm >= 0 && p >= 0 && d >= 0 {
			need = modelBytes(mm, p, d)
		}
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
