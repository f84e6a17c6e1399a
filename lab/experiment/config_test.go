package experiment

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// committedConfig is the config of a result.json written before Config
// embedded flycl.Config (results/cifar10-mobilenetv2/result.json).
const committedConfig = `{"m": 10000, "p": 300, "k": 3000, "w_seed": 0, "w_sha256": "bf77", "topk": "signed",
 "lambdas": [10000, 100000, 1000000], "lambda_scale": "absolute", "gcv": "auto", "gcv_scope": "task",
 "projection": "auto", "online_batch": 1000, "hebbian_passes": 100, "data": "features",
 "inputs": [{"role": "train", "path": "t.npz", "size": 2, "sha256": "ec"}]}`

// TestConfigJSON: a committed result's config reads into the embedded
// flycl.Config, and written again has the same keys and values (w_seed,
// the λ scale and the GCV scope included, which flycl.Config names or
// omits otherwise); a field of flycl.Config is written under its own
// name with no declaration here (WidenGrid).
func TestConfigJSON(t *testing.T) {
	var c Config
	if err := json.Unmarshal([]byte(committedConfig), &c); err != nil {
		t.Fatal(err)
	}
	want := flycl.Config{M: 10000, P: 300, K: 3000, TopK: projection.Signed, Lambdas: []float64{1e4, 1e5, 1e6},
		GCV: ridge.GCVAuto, GCVScope: flycl.GCVTask, Projection: projection.Auto}
	if c.M != want.M || c.P != want.P || c.K != want.K || !slices.Equal(c.Lambdas, want.Lambdas) || c.Seed != 0 ||
		c.WSHA256 != "bf77" || c.OnlineBatch != 1000 || c.HebbianPasses != 100 || len(c.Inputs) != 1 {
		t.Fatalf("read %+v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	json.Unmarshal([]byte(committedConfig), &before)
	if err := json.Unmarshal(b, &after); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if bv, av := before[k], after[k]; !jsonEqual(bv, av) {
			t.Errorf("%s: %v, written again %v", k, bv, av)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("written again with a new key %s", k)
		}
	}
	if d := Diff(&c, &Config{Config: want, WSHA256: "bf77", OnlineBatch: 1000, HebbianPasses: 100, Data: "features",
		Inputs: []Input{{Role: "train", Path: "elsewhere.npz", Size: 2, SHA256: "ec"}}}); len(d) != 0 {
		t.Errorf("the same configuration differs: %q", d)
	}

	c.WidenGrid, c.Seed = true, 7
	b, _ = json.Marshal(c)
	after = nil
	json.Unmarshal(b, &after)
	if after["widen_grid"] != true || after["w_seed"] != 7.0 || after["seed"] != nil {
		t.Errorf("a flycl.Config field is not written under its name: %s", b)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || !back.WidenGrid || back.Seed != 7 {
		t.Errorf("read back %+v, %v", back, err)
	}
	if d := Diff(&c, &back); len(d) != 0 {
		t.Errorf("written and read back it differs: %q", d)
	}
	if d := Diff(&c, &Config{Config: want}); !slices.ContainsFunc(d, func(s string) bool { return len(s) > 10 && s[:10] == "widen_grid" }) {
		t.Errorf("Diff does not see widen_grid: %q", d)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
