package onnx

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrMalformed is wrapped by Extend when the bytes are not a ModelProto it
// can continue.
var ErrMalformed = errors.New("onnx: malformed model")

// base is the model an extended graph continues.
type base struct {
	graph   []byte   // the GraphProto's fields less its outputs and name
	imports [][]byte // OperatorSetIdProto of the domains other than the default
	opset   int      // the default domain's opset
	ir      uint64   // IR version
	kept    []byte   // ModelProto fields kept as they are (functions, ...)
	meta    []metaKV // metadata_props
	name    string
}

type metaKV struct{ key, value string }

// Extend returns a graph that continues the graph of an existing model (a
// serialised ModelProto, such as Graph.Model returns or an .onnx file
// holds): its nodes, initialisers, inputs and value infos stay as they
// are, its outputs are dropped (declare the ones wanted with Output or
// OutputOf; a value of the base graph is referred to by its name), and
// the names of the values added never collide with a name of the base
// graph. Model then writes the whole: the base model's other operator-set
// domains, local functions and metadata are kept. Opset reports the
// base's default-domain opset, which the caller passes on to Model unless
// it knows that the base graph means the same at a later one.
func Extend(model []byte) (*Graph, error) {
	b := &base{}
	var graph []byte
	found := false
	for rest := model; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return nil, fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(m))
		}
		field, val := rest[:n+m], rest[n:n+m]
		rest = rest[n+m:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			b.ir, _ = protowire.ConsumeVarint(val)
		case num == 2 || num == 3: // producer name and version: rewritten
		case num == 7 && typ == protowire.BytesType:
			if found {
				return nil, fmt.Errorf("%w: two graphs", ErrMalformed)
			}
			graph, _ = protowire.ConsumeBytes(val)
			found = true
		case num == 8 && typ == protowire.BytesType:
			imp, _ := protowire.ConsumeBytes(val)
			domain, version, err := parseOpset(imp)
			if err != nil {
				return nil, err
			}
			if domain == "" || domain == "ai.onnx" {
				b.opset = int(version)
			} else {
				b.imports = append(b.imports, imp)
			}
		case num == 14 && typ == protowire.BytesType:
			kv, _ := protowire.ConsumeBytes(val)
			k, v, err := parseStrings(kv)
			if err != nil {
				return nil, err
			}
			b.meta = append(b.meta, metaKV{k, v})
		default:
			b.kept = append(b.kept, field...)
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: no graph", ErrMalformed)
	}
	if b.opset == 0 {
		return nil, fmt.Errorf("%w: no opset of the default domain", ErrMalformed)
	}
	g := &Graph{names: map[string]bool{}, base: b}
	if err := g.readBase(graph); err != nil {
		return nil, err
	}
	g.name = b.name
	return g, nil
}

// readBase keeps the graph's fields but its outputs and name, and
// records every name it defines or uses.
func (g *Graph) readBase(graph []byte) error {
	for rest := graph; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return fmt.Errorf("%w: graph: %v", ErrMalformed, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return fmt.Errorf("%w: graph field %d: %v", ErrMalformed, num, protowire.ParseError(m))
		}
		field, val := rest[:n+m], rest[n:n+m]
		rest = rest[n+m:]
		var body []byte
		if typ == protowire.BytesType {
			body, _ = protowire.ConsumeBytes(val)
		}
		switch {
		case num == 2 && typ == protowire.BytesType:
			g.base.name = string(body)
			continue
		case num == 12:
			continue
		case num == 1 && typ == protowire.BytesType: // node: inputs 1, outputs 2
			if err := g.recordNames(body, 1, 2); err != nil {
				return err
			}
		case num == 5 && typ == protowire.BytesType: // initializer: name 8
			if err := g.recordNames(body, 8); err != nil {
				return err
			}
		case (num == 11 || num == 13) && typ == protowire.BytesType: // value infos: name 1
			if err := g.recordNames(body, 1); err != nil {
				return err
			}
		}
		g.base.graph = append(g.base.graph, field...)
	}
	return nil
}

// recordNames marks as taken the strings of msg's fields nums.
func (g *Graph) recordNames(msg []byte, nums ...protowire.Number) error {
	for rest := msg; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(m))
		}
		if typ == protowire.BytesType {
			for _, want := range nums {
				if num == want {
					s, _ := protowire.ConsumeBytes(rest[n : n+m])
					g.names[string(s)] = true
				}
			}
		}
		rest = rest[n+m:]
	}
	return nil
}

// parseOpset reads an OperatorSetIdProto: domain 1, version 2.
func parseOpset(b []byte) (string, int64, error) {
	var domain string
	var version int64
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return "", 0, fmt.Errorf("%w: opset import: %v", ErrMalformed, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return "", 0, fmt.Errorf("%w: opset import: %v", ErrMalformed, protowire.ParseError(m))
		}
		switch {
		case num == 1 && typ == protowire.BytesType:
			s, _ := protowire.ConsumeBytes(rest[n : n+m])
			domain = string(s)
		case num == 2 && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(rest[n : n+m])
			version = int64(v)
		}
		rest = rest[n+m:]
	}
	if version <= 0 || version > 1000 {
		return "", 0, fmt.Errorf("%w: opset version %d of domain %q", ErrMalformed, version, domain)
	}
	return domain, version, nil
}

// parseStrings reads a StringStringEntryProto: key 1, value 2.
func parseStrings(b []byte) (key, value string, err error) {
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return "", "", fmt.Errorf("%w: metadata: %v", ErrMalformed, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return "", "", fmt.Errorf("%w: metadata: %v", ErrMalformed, protowire.ParseError(m))
		}
		if typ == protowire.BytesType {
			s, _ := protowire.ConsumeBytes(rest[n : n+m])
			switch num {
			case 1:
				key = string(s)
			case 2:
				value = string(s)
			}
		}
		rest = rest[n+m:]
	}
	return key, value, nil
}

// Opset returns the default-domain opset of the model an extended graph
// continues (0 for a new graph).
func (g *Graph) Opset() int {
	if g.base == nil {
		return 0
	}
	return g.base.opset
}

// Has reports whether name is taken: an input, an initialiser or the
// output of a node (of the base graph or added).
func (g *Graph) Has(name string) bool { return g.names[name] }

// SetMetadata sets an entry of the model's metadata_props (replacing one
// of the base model's with the same key). Runtimes show them to their
// users (ONNX Runtime: the session's model metadata, custom map).
func (g *Graph) SetMetadata(key, value string) {
	for i := range g.meta {
		if g.meta[i].key == key {
			g.meta[i].value = value
			return
		}
	}
	g.meta = append(g.meta, metaKV{key, value})
}

// Metadata reads a serialised model's metadata_props.
func Metadata(model []byte) (map[string]string, error) {
	out := map[string]string{}
	for rest := model; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return nil, fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(m))
		}
		if num == 14 && typ == protowire.BytesType {
			kv, _ := protowire.ConsumeBytes(rest[n : n+m])
			k, v, err := parseStrings(kv)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		rest = rest[n+m:]
	}
	return out, nil
}

// freshPrefix is the prefix of the names an extended graph generates: one
// that no name of the base graph's main graph starts with. (The names of
// its subgraphs, the bodies of If and Loop, are not read.)
func (g *Graph) freshPrefix() string {
	if g.base == nil {
		return ""
	}
	if g.prefix == "" {
		p := "flycl"
		for taken := true; taken; {
			p += "_"
			taken = false
			for n := range g.names {
				if strings.HasPrefix(n, p) {
					taken = true
					break
				}
			}
		}
		g.prefix = p
	}
	return g.prefix
}
