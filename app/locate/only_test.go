package locate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// commandDirs are the commands that turn flags into a locate.Resolver
// (they may read the environment: OpenBLAS's variables in flycl info), and
// scripts/, the developer tools. libflycl (cmd/libflycl) is not one: it is
// a library to its callers and resolves through locate like any other.
var commandDirs = map[string]bool{"cmd/flycl": true, "cmd/flycl-lab": true, "beam/cmd": true, "scripts": true, "app/locate": true}

// moduleRoot is the folder of the repository's go.mod, above this one.
func moduleRoot(t *testing.T) string {
	d, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "app", "locate")); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			t.Fatal("no go.mod above the test's folder")
		}
		d = filepath.Dir(d)
	}
}

// TestOnlyLocateReadsTheEnvironment: of every non-test Go file of the
// repository (from the module root, the Beam module and cmd/libflycl
// included) outside the commands (commandDirs), only locate reads an
// environment variable (os.Getenv, os.LookupEnv) or names ../shared or a
// system data folder; the others take paths as arguments.
func TestOnlyLocateReadsTheEnvironment(t *testing.T) {
	root := moduleRoot(t)
	files := 0
	seen := map[string]bool{}
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
			case commandDirs[rel],
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
		files++
		seen[filepath.ToSlash(filepath.Dir(rel))] = true
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
	// the walk covered the repository, not one folder of it
	for _, dir := range []string{".", "linalg", "app/server", "cmd/libflycl", "vision/extract", "beam/pipeline"} {
		if !seen[dir] {
			t.Errorf("the walk did not reach %s (%d files read)", dir, files)
		}
	}
}
