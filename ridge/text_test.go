package ridge

import "testing"

// TestGCVMethodText: every GCVMethod marshals to the name ParseGCVMethod
// reads back to the same value; a value out of range and an unknown name
// are errors.
func TestGCVMethodText(t *testing.T) {
	for _, c := range []struct {
		v    GCVMethod
		name string
	}{{GCVAuto, "auto"}, {GCVDual, "dual"}, {GCVPrimal, "primal"}, {GCVEigen, "eigen"}, {GCVBand, "band"}} {
		b, err := c.v.MarshalText()
		if err != nil || string(b) != c.name {
			t.Errorf("%d: MarshalText = %q, %v; want %q", c.v, b, err, c.name)
		}
		var back GCVMethod = 99
		if err := back.UnmarshalText(b); err != nil || back != c.v {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, c.v)
		}
	}
	if _, err := GCVMethod(99).MarshalText(); err == nil {
		t.Error("GCVMethod(99) marshalled")
	}
	var g GCVMethod
	if err := g.UnmarshalText([]byte("svd")); err == nil {
		t.Error(`"svd" parsed`)
	}
}
