package flycl_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// TestConfigJSON: a Config's JSON names its fields as a model file's
// header does (modelfile.Header embeds Config; that files written before
// it did still read is modelfile's TestReadsVersion3, on a golden file)
// and its enumerations by name; it decodes back to the same Config, and
// an unknown name is an error.
func TestConfigJSON(t *testing.T) {
	headerKeys := map[string]bool{}
	var collect func(reflect.Type)
	collect = func(ht reflect.Type) {
		for i := range ht.NumField() {
			f := ht.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" { // an embedded struct's keys are the header's
				collect(f.Type)
				continue
			}
			headerKeys[name] = true
		}
	}
	collect(reflect.TypeOf(modelfile.Header{}))
	for _, c := range []struct {
		cfg  flycl.Config
		enum map[string]string // key -> name
	}{
		{flycl.DefaultConfig(), map[string]string{"topk": "signed", "gcv": "auto", "projection": "auto"}},
		{flycl.Config{M: 500, P: 3, K: 50, Seed: 7, TopK: projection.Magnitude, Lambdas: []float64{0.5, 2},
			GCV: ridge.GCVBand, GCVScope: flycl.GCVAll, Projection: projection.Sparse, LambdaScale: flycl.LambdaRelative},
			map[string]string{"topk": "magnitude", "gcv": "band", "projection": "sparse", "gcv_scope": "all", "lambda_scale": "relative"}},
	} {
		b, err := json.Marshal(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		for k := range raw {
			if !headerKeys[k] {
				t.Errorf("%s: key %q is not a model file header key", b, k)
			}
		}
		for k, v := range c.enum {
			if raw[k] != v {
				t.Errorf("%s: %s = %v, want %q", b, k, raw[k], v)
			}
		}
		if _, ok := raw["lambda_scale"]; !ok && c.cfg.LambdaScale != flycl.LambdaAbsolute {
			t.Errorf("%s: lambda_scale missing", b)
		}
		var back flycl.Config
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, c.cfg) {
			t.Errorf("round trip %s: %+v, want %+v", b, back, c.cfg)
		}
	}
	var cfg flycl.Config
	for _, bad := range []string{`{"topk":"top"}`, `{"gcv":"svd"}`, `{"projection":"fast"}`, `{"lambda_scale":"log"}`, `{"gcv_scope":"some"}`} {
		if err := json.Unmarshal([]byte(bad), &cfg); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	var scale flycl.LambdaScale
	if _, err := flycl.LambdaScale(5).MarshalText(); err == nil || scale.UnmarshalText([]byte("relative")) != nil || scale != flycl.LambdaRelative {
		t.Errorf("LambdaScale text: %v, %v", err, scale)
	}
}
