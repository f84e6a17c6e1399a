package modelfile

import (
	"strings"
	"testing"
)

func testPipeline() *Pipeline {
	return &Pipeline{Backbone: "squeezenet", Name: "squeezenet1_1", WeightsHash: "5b2e4f0a9c", Output: "features", Dim: 512,
		Transform: Transform{Preset: "imagenet", Resize: 256, Filter: "bilinear", Crop: 224,
			Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}},
		Precision: "int8", Calibration: "0 6 -1.5 3.25"}
}

// TestPipelineText: the identity a feature file records reads back equal
// (Check finds no difference); every field that changes the features makes
// Check refuse, naming both sides; a calibration spelled differently with
// the same float32 numbers is the same calibration.
func TestPipelineText(t *testing.T) {
	p := testPipeline()
	q, err := ParsePipeline(p.Text())
	if err != nil {
		t.Fatal(err)
	}
	if *q != *p || p.Check(q) != nil {
		t.Fatalf("round trip: %+v, want %+v", q, p)
	}
	for _, tc := range []struct {
		name string
		edit func(p *Pipeline)
		want []string
	}{
		{"weights", func(p *Pipeline) { p.WeightsHash, p.Backbone = "77aa", "mobilenetv2" }, []string{"77aa", "5b2e4f0a9c", "mobilenetv2", "squeezenet"}},
		{"precision", func(p *Pipeline) { p.Precision, p.Calibration = "", "" }, []string{"fp32", "int8"}},
		{"output", func(p *Pipeline) { p.Output = "logits" }, []string{"logits", "features"}},
		{"dimension", func(p *Pipeline) { p.Dim = 1000 }, []string{"1000", "512"}},
		{"transform", func(p *Pipeline) { p.Transform.Crop = 192 }, []string{"Crop:192", "Crop:224"}},
		{"calibration", func(p *Pipeline) { p.Calibration = "0 6 -1.5 3.5" }, []string{"3.5", "3.25"}},
	} {
		o := testPipeline()
		tc.edit(o)
		err := p.Check(o)
		if err == nil {
			t.Errorf("%s: Check accepted a different pipeline", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to name %q", tc.name, err, w)
			}
		}
	}
	o := testPipeline()
	o.Calibration = "0.0 6e0 -1.50 3.250"
	if err := p.Check(o); err != nil {
		t.Errorf("same calibration spelled differently: %v", err)
	}
	// fp32 is spelled "" or "fp32" (both valid): the same precision
	f1, f2 := testPipeline(), testPipeline()
	f1.Precision, f1.Calibration = "", ""
	f2.Precision, f2.Calibration = "fp32", ""
	if err := f1.Check(f2); err != nil {
		t.Errorf("fp32 spelled \"\" and \"fp32\": %v", err)
	}
	if err := f2.Check(f1); err != nil {
		t.Errorf("fp32 spelled \"fp32\" and \"\": %v", err)
	}
	for _, bad := range []string{``, `{}`, `{"weights_hash":"a","transform":{"resize":1,"crop":1,"std":[1,1,1]},"colour":"red"}`,
		`{"weights_hash":"a","transform":{"resize":1,"crop":1,"std":[1,1,1]},"precision":"fp8"}`, `[]`, `{"weights_hash":"a"} {}`, testPipeline().Text() + "}", testPipeline().Text() + "]"} {
		if _, err := ParsePipeline(bad); err == nil {
			t.Errorf("ParsePipeline(%q) accepted it", bad)
		}
	}
}

// FuzzParsePipeline: no text panics the parser; what it accepts is valid
// and reads back equal from its own Text.
func FuzzParsePipeline(f *testing.F) {
	f.Add(testPipeline().Text())
	f.Add(`{"weights_hash":"a","transform":{"resize":1,"crop":1,"std":[1,1,1]}}`)
	f.Add(`{"weights_hash":"a","transform":{"resize":1,"crop":1,"std":[1,1,1]},"precision":"int8","calibration":"1 2"}`)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePipeline(s)
		if err != nil {
			return
		}
		if err := p.validate(); err != nil {
			t.Fatalf("accepted an invalid pipeline: %v", err)
		}
		q, err := ParsePipeline(p.Text())
		if err != nil || *q != *p {
			t.Fatalf("Text does not read back: %v %+v %+v", err, p, q)
		}
	})
}
