package projection

import (
	"encoding"
	"testing"
)

// TestEnumText: every Method and TopKMode marshals to the name its Parse
// function reads back to the same value, aliases parse as documented, and
// values out of range or unknown names are errors.
func TestEnumText(t *testing.T) {
	for _, c := range []struct {
		v    encoding.TextMarshaler
		name string
	}{
		{Auto, "auto"}, {Dense, "dense"}, {Sparse, "sparse"},
		{Signed, "signed"}, {Magnitude, "magnitude"},
	} {
		b, err := c.v.MarshalText()
		if err != nil || string(b) != c.name {
			t.Errorf("%v: MarshalText = %q, %v; want %q", c.v, b, err, c.name)
		}
	}
	for _, c := range []struct {
		text string
		want Method
	}{{"auto", Auto}, {"", Auto}, {"dense", Dense}, {"sparse", Sparse}} {
		var m Method = 7
		if err := m.UnmarshalText([]byte(c.text)); err != nil || m != c.want {
			t.Errorf("Method.UnmarshalText(%q) = %v, %v; want %v", c.text, m, err, c.want)
		}
	}
	for _, c := range []struct {
		text string
		want TopKMode
	}{{"signed", Signed}, {"", Signed}, {"magnitude", Magnitude}, {"abs", Magnitude}} {
		var k TopKMode = 7
		if err := k.UnmarshalText([]byte(c.text)); err != nil || k != c.want {
			t.Errorf("TopKMode.UnmarshalText(%q) = %v, %v; want %v", c.text, k, err, c.want)
		}
	}
	if _, err := Method(3).MarshalText(); err == nil {
		t.Error("Method(3) marshalled")
	}
	if _, err := TopKMode(-1).MarshalText(); err == nil {
		t.Error("TopKMode(-1) marshalled")
	}
	var m Method
	if err := m.UnmarshalText([]byte("Dense")); err == nil {
		t.Error(`Method "Dense" parsed`)
	}
	var k TopKMode
	if err := k.UnmarshalText([]byte("top")); err == nil {
		t.Error(`TopKMode "top" parsed`)
	}
}
