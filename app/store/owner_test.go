package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// owners may write a model file or its journal: the formats (modelfile),
// the model's save and journal entries (deploy), and this store.
var owners = []string{"format/modelfile", "app/deploy", "app/store"}

// pending are the writers not yet moved onto the store, by file: none
// (the Beam pipeline's finalizer, in its own module, writes through the
// store too). The test fails when one of them stops writing too, so that
// the list stays true.
var pending []string

// writers are the calls that write a model file or journal, or take its
// lock, outside the owners: modelfile's functions and deploy.Model's
// journal methods by name, and a one-argument Save of a value in a file
// that imports deploy (deploy.Model.Save; features.Save and the others
// are package functions with more arguments).
var (
	modelfileWriters = []string{"Save", "SaveModel", "OpenJournal", "ResetJournal", "ResetJournalKeep", "TakeLock", "RepairJournal"}
	methodWriters    = []string{"AppendHistory", "StartJournal"}
)

// TestOnlyStoreWrites: no package but the owners writes a model file or
// its journal, or takes its lock (scanning every non-test Go file of the
// repository).
func TestOnlyStoreWrites(t *testing.T) {
	root := filepath.Join("..", "..")
	found := map[string][]string{}
	users := map[string]bool{} // files that call store.Open
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel != "." {
			if slices.Contains(owners, rel) || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		imports := map[string]string{} // local name -> path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = p
		}
		deployName := ""
		for n, p := range imports {
			if p == "github.com/flycl/flycl/app/deploy" {
				deployName = n
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				// (*deploy.Model).Save as a method value
				if p, ok := n.X.(*ast.ParenExpr); ok && n.Sel.Name == "Save" && deployName != "" {
					if st, ok := p.X.(*ast.StarExpr); ok {
						if se, ok := st.X.(*ast.SelectorExpr); ok && isIdent(se.X, deployName) && se.Sel.Name == "Model" {
							found[rel] = append(found[rel], fset.Position(n.Pos()).String()+": (*deploy.Model).Save")
						}
					}
				}
			case *ast.CallExpr:
				se, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, isID := se.X.(*ast.Ident)
				_, isPkg := imports[identName(x)]
				if isID && imports[x.Name] == "github.com/flycl/flycl/app/store" && se.Sel.Name == "Open" {
					users[rel] = true
				}
				switch {
				case isID && imports[x.Name] == "github.com/flycl/flycl/format/modelfile" && slices.Contains(modelfileWriters, se.Sel.Name):
					found[rel] = append(found[rel], fset.Position(n.Pos()).String()+": modelfile."+se.Sel.Name)
				case slices.Contains(methodWriters, se.Sel.Name):
					found[rel] = append(found[rel], fset.Position(n.Pos()).String()+": "+se.Sel.Name)
				case se.Sel.Name == "Save" && len(n.Args) == 1 && deployName != "" && !(isID && isPkg):
					found[rel] = append(found[rel], fset.Position(n.Pos()).String()+": a model's Save")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, sites := range found {
		if !slices.Contains(pending, file) {
			t.Errorf("%s writes a model file, its journal or lock outside the store (move it onto store.Update):\n\t%s", file, strings.Join(sites, "\n\t"))
		}
	}
	for _, file := range pending {
		if _, ok := found[file]; !ok {
			t.Errorf("%s no longer writes a model file: take it off the pending list", file)
		}
	}
	// the scan sees the code: the store's known users, the Beam module's
	// finalizer among them
	for _, file := range []string{"app/server/filebackend.go", "beam/pipeline/files.go"} {
		if !users[file] {
			t.Errorf("the scan did not see %s open the store: it does not see the code", file)
		}
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func identName(id *ast.Ident) string {
	if id == nil {
		return ""
	}
	return id.Name
}
