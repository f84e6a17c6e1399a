package locate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyLocateReadsTheEnvironment: of the library packages (every
// non-test Go file of the repository outside the binaries cmd/,
// beam/cmd/ and scripts/), only locate reads an environment variable
// (os.Getenv, os.LookupEnv) or names ../shared or a system data folder;
// the others take paths as arguments.
func TestOnlyLocateReadsTheEnvironment(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".":
				return nil
			case rel == "cmd", rel == "scripts", rel == "beam/cmd", rel == "locate",
				strings.HasPrefix(d.Name(), "."), d.Name() == "testdata", d.Name() == "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		osName := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "os" {
				osName = "os"
				if im.Name != nil {
					osName = im.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && osName != "" && id.Name == osName && (n.Sel.Name == "Getenv" || n.Sel.Name == "LookupEnv") {
					t.Errorf("%s: os.%s: only package locate reads the environment", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && (strings.Contains(n.Value, "../shared") || strings.Contains(n.Value, "/usr/share/")) {
					t.Errorf("%s: %s: only package locate knows where data lies outside the binary", fset.Position(n.Pos()), n.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
