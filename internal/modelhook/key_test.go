package modelhook

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"testing"
)

// TestKeyOnlyThisModule checks the claim flycl.Internal rests on: a
// package that cannot import modelhook cannot build a Key, even by
// writing a struct literal of Key's own shape. Key's declaration is read
// from this package's source and type-checked, with a function taking it,
// as package "hook"; a second package "outside" then calls that function
// with Key{} spelled out, which the type checker must refuse, while the
// same call inside "hook" is accepted (the check is not vacuous).
func TestKeyOnlyThisModule(t *testing.T) {
	src, err := os.ReadFile("modelhook.go")
	if err != nil {
		t.Fatal(err)
	}
	decl := keyDecl(t, src)
	fset := token.NewFileSet()
	hookSrc := "package hook\n" + decl + "\nfunc Internal(Key) {}\nfunc inside() { Internal(Key{}) }\n"
	hf, err := parser.ParseFile(fset, "hook.go", hookSrc, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	hook, err := conf.Check("hook", fset, []*ast.File{hf}, nil)
	if err != nil {
		t.Fatalf("Key and a call building it inside its package do not type-check: %v", err)
	}
	shape := types.ExprString(keyType(hf))
	outSrc := "package outside\nimport \"hook\"\nfunc f() { hook.Internal(" + shape + "{}) }\n"
	of, err := parser.ParseFile(fset, "outside.go", outSrc, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf2 := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) { return hook, nil })}
	if _, err := conf2.Check("outside", fset, []*ast.File{of}, nil); err == nil {
		t.Fatalf("another package built a Key as %s{}: flycl.Internal would be callable from outside the module", shape)
	}
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// keyDecl is the source text of the declaration of Key in src.
func keyDecl(t *testing.T, src []byte) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "modelhook.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			if ts := s.(*ast.TypeSpec); ts.Name.Name == "Key" {
				return "type " + string(src[fset.Position(ts.Pos()).Offset:fset.Position(ts.End()).Offset])
			}
		}
	}
	t.Fatal("no type Key in modelhook.go")
	return ""
}

// keyType is the type expression of Key's declaration in f.
func keyType(f *ast.File) ast.Expr {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			return g.Specs[0].(*ast.TypeSpec).Type
		}
	}
	return nil
}
