package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Element types (TensorProto.DataType).
const (
	Float = 1
	Uint8 = 2
	Int8  = 3
	Int32 = 6
	Int64 = 7
	Bool  = 9
)

// Graph is an ONNX graph under construction. Names are generated for
// intermediate values; every method returns the name of its output.
type Graph struct {
	name    string
	nodes   [][]byte
	inits   [][]byte
	inputs  [][]byte
	outputs [][]byte
	n       int
	names   map[string]bool
	base    *base    // the model an extended graph continues (see Extend)
	prefix  string   // of generated names in an extended graph
	meta    []metaKV // metadata_props
}

// NewGraph starts an empty graph.
func NewGraph(name string) *Graph { return &Graph{name: name, names: map[string]bool{}} }

func (g *Graph) fresh(prefix string) string {
	for {
		g.n++
		s := fmt.Sprintf("%s%s_%d", g.freshPrefix(), prefix, g.n)
		if !g.names[s] {
			g.names[s] = true
			return s
		}
	}
}

// Attr is a node attribute.
type Attr struct {
	Name   string
	Int    *int64
	Ints   []int64
	Float  *float32
	String *string
	isInts bool
}

// AInt, AInts, AFloat and AString make attributes.
func AInt(name string, v int64) Attr     { return Attr{Name: name, Int: &v} }
func AInts(name string, v ...int64) Attr { return Attr{Name: name, Ints: v, isInts: true} }
func AFloat(name string, v float32) Attr { return Attr{Name: name, Float: &v} }
func AString(name string, v string) Attr { return Attr{Name: name, String: &v} }

func (a Attr) encode() []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, a.Name)
	switch {
	case a.Float != nil:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(*a.Float))
		b = appendVarintField(b, 20, 1)
	case a.Int != nil:
		b = appendVarintField(b, 3, uint64(*a.Int))
		b = appendVarintField(b, 20, 2)
	case a.String != nil:
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendString(b, *a.String)
		b = appendVarintField(b, 20, 3)
	case a.isInts:
		for _, v := range a.Ints {
			b = appendVarintField(b, 8, uint64(v))
		}
		b = appendVarintField(b, 20, 7)
	}
	return b
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// valueInfo encodes a ValueInfoProto for a tensor; negative dims are
// symbolic (named "N").
func valueInfo(name string, elem int, dims []int64) []byte {
	var shape []byte
	for _, d := range dims {
		var dim []byte
		if d < 0 {
			dim = protowire.AppendTag(dim, 2, protowire.BytesType)
			dim = protowire.AppendString(dim, "N")
		} else {
			dim = appendVarintField(dim, 1, uint64(d))
		}
		shape = appendBytesField(shape, 1, dim)
	}
	var tt []byte
	tt = appendVarintField(tt, 1, uint64(elem))
	tt = appendBytesField(tt, 2, shape)
	var tp []byte
	tp = appendBytesField(tp, 1, tt)
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	return appendBytesField(b, 2, tp)
}

// Input declares a float32 graph input; -1 marks a dynamic dimension.
func (g *Graph) Input(name string, dims ...int64) string {
	g.names[name] = true
	g.inputs = append(g.inputs, valueInfo(name, Float, dims))
	return name
}

// Output declares value as a float32 graph output.
func (g *Graph) Output(value string, dims ...int64) { g.OutputOf(value, Float, dims...) }

// OutputOf declares value as a graph output of element type elem (Float,
// Int64, ...).
func (g *Graph) OutputOf(value string, elem int, dims ...int64) {
	g.outputs = append(g.outputs, valueInfo(value, elem, dims))
}

func tensor(name string, elem int, dims []int64, raw []byte) []byte {
	var b []byte
	for _, d := range dims {
		b = appendVarintField(b, 1, uint64(d))
	}
	b = appendVarintField(b, 2, uint64(elem))
	b = protowire.AppendTag(b, 8, protowire.BytesType)
	b = protowire.AppendString(b, name)
	return appendBytesField(b, 9, raw)
}

func numel(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

// Const adds a float32 initialiser with the given shape.
func (g *Graph) Const(prefix string, dims []int64, data []float32) string {
	if int64(len(data)) != numel(dims) {
		panic(fmt.Sprintf("onnx.Const %s: %d values for shape %v", prefix, len(data), dims))
	}
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	name := g.fresh(prefix)
	g.inits = append(g.inits, tensor(name, Float, dims, raw))
	return name
}

// ConstInt64 adds an int64 initialiser (shapes, axes, indices).
func (g *Graph) ConstInt64(prefix string, dims []int64, data []int64) string {
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	name := g.fresh(prefix)
	g.inits = append(g.inits, tensor(name, Int64, dims, raw))
	return name
}

// ConstInt8 adds an int8 initialiser (quantized weights, zero points).
func (g *Graph) ConstInt8(prefix string, dims []int64, data []int8) string {
	if int64(len(data)) != numel(dims) {
		panic(fmt.Sprintf("onnx.ConstInt8 %s: %d values for shape %v", prefix, len(data), dims))
	}
	raw := make([]byte, len(data))
	for i, v := range data {
		raw[i] = byte(v)
	}
	name := g.fresh(prefix)
	g.inits = append(g.inits, tensor(name, Int8, dims, raw))
	return name
}

// ConstUint8 adds a uint8 initialiser (activation zero points).
func (g *Graph) ConstUint8(prefix string, dims []int64, data []uint8) string {
	if int64(len(data)) != numel(dims) {
		panic(fmt.Sprintf("onnx.ConstUint8 %s: %d values for shape %v", prefix, len(data), dims))
	}
	name := g.fresh(prefix)
	g.inits = append(g.inits, tensor(name, Uint8, dims, append([]byte(nil), data...)))
	return name
}

// ConstInt32 adds an int32 initialiser (quantized biases).
func (g *Graph) ConstInt32(prefix string, dims []int64, data []int32) string {
	if int64(len(data)) != numel(dims) {
		panic(fmt.Sprintf("onnx.ConstInt32 %s: %d values for shape %v", prefix, len(data), dims))
	}
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
	}
	name := g.fresh(prefix)
	g.inits = append(g.inits, tensor(name, Int32, dims, raw))
	return name
}

// Scalar adds a float32 scalar initialiser.
func (g *Graph) Scalar(v float32) string { return g.Const("c", nil, []float32{v}) }

// Node adds an operator with one output and returns the output's name.
func (g *Graph) Node(op string, inputs []string, attrs ...Attr) string {
	return g.NodeN(op, inputs, 1, attrs...)[0]
}

// NodeN adds an operator with n outputs.
func (g *Graph) NodeN(op string, inputs []string, n int, attrs ...Attr) []string {
	outs := make([]string, n)
	for i := range outs {
		outs[i] = g.fresh(op)
	}
	var b []byte
	for _, in := range inputs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, o := range outs {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, o)
	}
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, outs[0])
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, op)
	for _, a := range attrs {
		b = appendBytesField(b, 5, a.encode())
	}
	g.nodes = append(g.nodes, b)
	return outs
}

// Named gives value a chosen name (through an Identity node), for graph
// outputs.
func (g *Graph) Named(name, value string) string {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, value)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, "Identity")
	g.nodes = append(g.nodes, b)
	g.names[name] = true
	return name
}

// Model serialises the graph as a ModelProto (IR version 8, or the base
// model's when later) importing the default domain at the given opset,
// with the metadata set by SetMetadata. An extended graph (Extend) writes
// the base graph's nodes first and keeps the base model's other domains,
// functions and metadata.
func (g *Graph) Model(opset int) []byte {
	var gb []byte
	ir := uint64(8)
	if g.base != nil {
		gb = append(gb, g.base.graph...)
		ir = max(ir, g.base.ir)
	}
	for _, n := range g.nodes {
		gb = appendBytesField(gb, 1, n)
	}
	gb = protowire.AppendTag(gb, 2, protowire.BytesType)
	gb = protowire.AppendString(gb, g.name)
	for _, t := range g.inits {
		gb = appendBytesField(gb, 5, t)
	}
	for _, in := range g.inputs {
		gb = appendBytesField(gb, 11, in)
	}
	for _, out := range g.outputs {
		gb = appendBytesField(gb, 12, out)
	}
	var op []byte
	op = protowire.AppendTag(op, 1, protowire.BytesType)
	op = protowire.AppendString(op, "")
	op = appendVarintField(op, 2, uint64(opset))
	var m []byte
	m = appendVarintField(m, 1, ir)
	m = protowire.AppendTag(m, 2, protowire.BytesType)
	m = protowire.AppendString(m, "flycl")
	m = appendBytesField(m, 7, gb)
	m = appendBytesField(m, 8, op)
	meta := g.meta
	if g.base != nil {
		for _, imp := range g.base.imports {
			m = appendBytesField(m, 8, imp)
		}
		m = append(m, g.base.kept...)
		var kept []metaKV
		for _, kv := range g.base.meta {
			if !slices.ContainsFunc(g.meta, func(o metaKV) bool { return o.key == kv.key }) {
				kept = append(kept, kv)
			}
		}
		meta = append(kept, g.meta...)
	}
	for _, kv := range meta {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, kv.key)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, kv.value)
		m = appendBytesField(m, 14, e)
	}
	return m
}
