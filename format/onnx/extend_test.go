package onnx

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// baseModel is a small model with a second operator-set domain and
// metadata, whose value names include the ones fresh would generate.
func baseModel() []byte {
	g := NewGraph("base")
	x := g.Input("x", -1, 3)
	y := g.Node("Relu", []string{x})                                 // "Relu_1"
	y = g.Node("Mul", []string{y, g.Const("Mul", []int64{3}, nil3)}) // "Mul_2", "Mul_3"
	g.Output(g.Named("y", y), -1, 3)
	g.SetMetadata("keep", "1")
	g.SetMetadata("replace", "old")
	m := g.Model(15)
	var imp []byte
	imp = protowire.AppendTag(imp, 1, protowire.BytesType)
	imp = protowire.AppendString(imp, "com.example")
	imp = appendVarintField(imp, 2, 2)
	return appendBytesField(m, 8, imp)
}

var nil3 = []float32{1, 2, 3}

// Extend keeps the base graph (nodes, initialisers, inputs), drops its
// outputs, never reuses its names, and writes the base's other domains
// and metadata (a key set again replaced).
func TestExtend(t *testing.T) {
	g, err := Extend(baseModel())
	if err != nil {
		t.Fatal(err)
	}
	if g.Opset() != 15 {
		t.Errorf("opset %d, want 15", g.Opset())
	}
	for _, n := range []string{"x", "y", "Relu_1", "Mul_3"} {
		if !g.Has(n) {
			t.Errorf("base name %q not recorded", n)
		}
	}
	base := make(map[string]bool, len(g.names))
	for n := range g.names {
		base[n] = true
	}
	z := g.Node("Relu", []string{"y"})
	for n := range base {
		if strings.HasPrefix(n, g.prefix) {
			t.Errorf("base name %q starts with the prefix %q of fresh names", n, g.prefix)
		}
	}
	if base[z] || !strings.HasPrefix(z, g.prefix) {
		t.Errorf("fresh name %q (prefix %q)", z, g.prefix)
	}
	g.OutputOf(g.Named("z", z), Float, -1, 3)
	g.SetMetadata("replace", "new")
	m := g.Model(g.Opset())

	meta, err := Metadata(m)
	if err != nil {
		t.Fatal(err)
	}
	if meta["keep"] != "1" || meta["replace"] != "new" || len(meta) != 2 {
		t.Errorf("metadata %v", meta)
	}
	again, err := Extend(m)
	if err != nil {
		t.Fatal(err)
	}
	if again.Opset() != 15 || len(again.base.imports) != 1 {
		t.Errorf("written model: opset %d, %d other domains", again.Opset(), len(again.base.imports))
	}
	// one graph output (z), the base's dropped; nodes: 3 base + 2 added
	var outs, nodes int
	for rest := again.base.graph; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		l := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if num == 1 {
			nodes++
		}
		rest = rest[n+l:]
	}
	for rest := m; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		l := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if num == 7 {
			gb, _ := protowire.ConsumeBytes(rest[n : n+l])
			for r := gb; len(r) > 0; {
				gn, gt, k := protowire.ConsumeTag(r)
				gl := protowire.ConsumeFieldValue(gn, gt, r[k:])
				if gn == 12 {
					outs++
				}
				r = r[k+gl:]
			}
		}
		rest = rest[n+l:]
	}
	if outs != 1 || nodes != 5 {
		t.Errorf("%d outputs and %d nodes, want 1 and 5", outs, nodes)
	}
}

func TestExtendRefusesMalformed(t *testing.T) {
	good := baseModel()
	noOpset := NewGraph("g")
	noOpset.Input("x", 1)
	var justGraph []byte
	for rest := noOpset.Model(17); len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		l := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if num != 8 {
			justGraph = append(justGraph, rest[:n+l]...)
		}
		rest = rest[n+l:]
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)/2],
		"no opset":  justGraph,
		"garbage":   []byte("not a model at all"),
	} {
		if _, err := Extend(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzExtend: no bytes may panic Extend, and what it accepts it writes
// back as a model it accepts again, with the same opset.
func FuzzExtend(f *testing.F) {
	f.Add(baseModel())
	g := NewGraph("t")
	g.Output(g.Named("o", g.Node("Relu", []string{g.Input("i", -1, 2)})), -1, 2)
	f.Add(g.Model(17))
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Extend(b)
		if err != nil {
			return
		}
		g.Node("Identity", []string{"x"})
		again, err := Extend(g.Model(g.Opset()))
		if err != nil {
			t.Fatalf("a model Extend accepted, written back, is refused: %v", err)
		}
		if again.Opset() != g.Opset() {
			t.Fatalf("opset %d became %d", g.Opset(), again.Opset())
		}
	})
}

// FuzzMetadata: no bytes may panic Metadata; and a model Extend accepts,
// given one metadata entry and written back, has that entry and every
// other entry of the base as Metadata read them.
func FuzzMetadata(f *testing.F) {
	f.Add(baseModel(), "replace", "new")
	f.Add(baseModel(), "added", "x")
	g := NewGraph("t")
	g.Output(g.Named("o", g.Node("Relu", []string{g.Input("i", -1, 2)})), -1, 2)
	g.SetMetadata("k", "1")
	g.SetMetadata("k2", "2")
	f.Add(g.Model(17), "k", "")
	// a key twice (ONNX does not forbid it: the last is the one read)
	dup := appendBytesField(g.Model(17), 14, appendBytesField(appendBytesField(nil, 1, []byte("k")), 2, []byte("3")))
	f.Add(dup, "k", "4")
	f.Add([]byte{0x72, 0x02, 0x0a, 0x00}, "", "")
	f.Add([]byte{0x72, 0x03, 0x0a, 0x05, 0x61}, "a", "b")
	f.Fuzz(func(t *testing.T, b []byte, key, value string) {
		before, err := Metadata(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		g, err := Extend(b)
		if err != nil {
			return
		}
		g.SetMetadata(key, value)
		after, err := Metadata(g.Model(g.Opset()))
		if err != nil {
			t.Fatalf("a model written back has metadata Metadata refuses: %v", err)
		}
		before[key] = value
		if !maps.Equal(after, before) {
			t.Fatalf("metadata %q after setting %q=%q, want %q", after, key, value, before)
		}
	})
}
