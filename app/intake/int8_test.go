package intake

import (
	"context"
	"os"
	"testing"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// TestInt8Pipeline: an int8 extractor's pipeline records the precision and
// calibration, and ForModel rebuilds the identical int8 graph (same hash,
// same features) from the fp32 backbone and that pipeline alone.
func TestInt8Pipeline(t *testing.T) {
	m := sharedSqueezeNet(t)
	lib := os.Getenv("FLYCL_ORT_LIB")
	if lib == "" {
		lib = "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	}
	if err := backbone.Init(lib); err != nil {
		t.Skip(err)
	}
	x := make([]float32, 2*3*224*224)
	for i := range x {
		x[i] = float32(i%97)/48 - 1
	}
	q, err := m.Int8(context.Background(), backbone.CalibMinMax, x, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := extract.NewExtractor(q, "squeezenet", "features", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := e.Pipeline()
	if p.Precision != "int8" || p.Calibration == "" || p.WeightsHash != q.Hash {
		t.Fatalf("pipeline %+v", p)
	}
	again, err := extract.ForModel(p, m, "squeezenet")
	if err != nil {
		t.Fatal(err)
	}
	if again.Backbone.Hash != q.Hash || again.Backbone.Precision != backbone.INT8 {
		t.Fatalf("rebuilt %s %s, want %s", again.Backbone.Name, again.Backbone.Hash, q.Hash)
	}
	// an fp32 pipeline refuses the int8 backbone and vice versa
	f, err := extract.NewExtractor(m, "squeezenet", "features", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Pipeline().Check(p); err == nil {
		t.Error("fp32 and int8 pipelines compare equal")
	}
}
