package extract

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestParseBackbone: each kind of spec parses into its parts, what its
// weights are read from is known without opening it, and bad specs are
// refused naming the spec.
func TestParseBackbone(t *testing.T) {
	models := filepath.Join("m", "models")
	for _, tc := range []struct {
		spec    string
		want    BackboneSpec
		weights string // WeightsPath(models)
		err     string // "" : parses
	}{
		{spec: "squeezenet", want: BackboneSpec{Name: "squeezenet"}, weights: filepath.Join(models, "squeezenet1.1")},
		{spec: "mobilenetv2", want: BackboneSpec{Name: "mobilenetv2"}, weights: filepath.Join(models, "mobilenetv2-1.0")},
		{spec: "mobilenetv2:/w/mnv2", want: BackboneSpec{Name: "mobilenetv2", Path: "/w/mnv2"}, weights: "/w/mnv2"},
		{spec: "resnet50:r.pth", want: BackboneSpec{Name: "resnet50", Path: "r.pth"}, weights: "r.pth"},
		{spec: "vit:v.npz", want: BackboneSpec{Name: "vit", Path: "v.npz"}, weights: "v.npz"},
		{spec: "vit:v.npz@12", want: BackboneSpec{Name: "vit", Path: "v.npz", Heads: 12}, weights: "v.npz"},
		{spec: "vit:v.npz@", want: BackboneSpec{Name: "vit", Path: "v.npz"}, weights: "v.npz"},
		{spec: "onnx:g.onnx", want: BackboneSpec{Name: "onnx", Path: "g.onnx"}, weights: "g.onnx"},
		{spec: "onnx:g.onnx#feat", want: BackboneSpec{Name: "onnx", Path: "g.onnx", Output: "feat"}, weights: "g.onnx"},
		{spec: "resnet50", err: "needs a checkpoint"},
		{spec: "vit", err: "needs a checkpoint"},
		{spec: "onnx", err: "needs a graph"},
		{spec: "vit:v.npz@x", err: "heads"},
		{spec: "vit:v.npz@0", err: "heads"},
		{spec: "alexnet", err: "unknown backbone"},
		{spec: "", err: "unknown backbone"},
	} {
		s, err := ParseBackbone(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "backbone "+tc.spec+": ") {
				t.Errorf("ParseBackbone(%q): %v, want an error starting with the spec and saying %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseBackbone(%q): %v", tc.spec, err)
			continue
		}
		tc.want.text = tc.spec
		if s != tc.want || s.String() != tc.spec {
			t.Errorf("ParseBackbone(%q) = %+v (%s), want %+v", tc.spec, s, s, tc.want)
		}
		if got := s.WeightsPath(models); got != tc.weights {
			t.Errorf("%s: weights %q, want %q", tc.spec, got, tc.weights)
		}
		if _, ok := s.Folder(); ok && s.WeightsPath("") != "" {
			t.Errorf("%s without a models folder: weights %q, want none", tc.spec, s.WeightsPath(""))
		}
		// the spec composed from its parts parses back into them
		c := s
		c.text = ""
		back, err := ParseBackbone(c.String())
		back.text = ""
		if err != nil || back != c {
			t.Errorf("%s: composed as %q, parsed back as %+v (%v)", tc.spec, c.String(), back, err)
		}
	}
}

// FuzzParseBackbone: any text parses or is refused without a panic; a
// parsed spec gives back the text it was parsed from.
func FuzzParseBackbone(f *testing.F) {
	for _, s := range []string{"squeezenet", "mobilenetv2:/w", "vit:v.npz@12", "onnx:g.onnx#o", "resnet50:", "vit:@", "onnx:#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseBackbone(spec)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "backbone ") {
				t.Fatalf("error without the prefix: %v", err)
			}
			return
		}
		if s.String() != spec {
			t.Fatalf("String() = %q, want %q", s.String(), spec)
		}
	})
}
