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

// owners may write a model file or its journal, or take its lock: the
// format itself (modelfile: the encoder, the journal and lock types) and
// this store, which every other package writes through.
var owners = []string{"format/modelfile", "app/store"}

// pending are the writers not yet moved onto the store, by file: none
// (the Beam pipeline's finalizer, in its own module, writes through the
// store too). The test fails when one of them stops writing too, so that
// the list stays true.
var pending []string

// writers are the calls that write a model file or journal, or take its
// lock, outside the owners: modelfile's writing functions by name, and
// a call of the os package that creates, writes, renames, truncates or
// removes a path made by modelfile.JournalPath or LockPath.
var (
	modelfileWriters = []string{"Save", "SaveModel", "OpenJournal", "ResetJournal", "ResetJournalKeep", "TakeLock", "RepairJournal"}
	osWriters        = []string{"Create", "OpenFile", "WriteFile", "Remove", "RemoveAll", "Rename", "Truncate", "Symlink", "Link", "Chmod"}
	modelfilePaths   = []string{"JournalPath", "LockPath"}
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
		ast.Inspect(f, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				// a writer called, or taken as a value
				if pkg, name := pkgSel(se, imports); pkg == "github.com/flycl/flycl/format/modelfile" && slices.Contains(modelfileWriters, name) {
					found[rel] = append(found[rel], fset.Position(se.Pos()).String()+": modelfile."+name)
				}
				return true
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			pkg, name := pkgCall(call, imports)
			switch {
			case pkg == "github.com/flycl/flycl/app/store" && name == "Open":
				users[rel] = true
			case pkg == "os" && slices.Contains(osWriters, name):
				for _, a := range call.Args {
					ast.Inspect(a, func(n ast.Node) bool {
						if c, ok := n.(*ast.CallExpr); ok {
							if p, fn := pkgCall(c, imports); p == "github.com/flycl/flycl/format/modelfile" && slices.Contains(modelfilePaths, fn) {
								found[rel] = append(found[rel], fset.Position(call.Pos()).String()+": os."+name+" of modelfile."+fn)
							}
						}
						return true
					})
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

// pkgCall returns the import path and name of a call of a package's
// function (pkg.Name(...)), or "" when call is not one.
func pkgCall(call *ast.CallExpr, imports map[string]string) (pkg, name string) {
	se, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	return pkgSel(se, imports)
}

// pkgSel returns the import path and name of a package's member (pkg.Name),
// or "" when se is not one.
func pkgSel(se *ast.SelectorExpr, imports map[string]string) (pkg, name string) {
	x, ok := se.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return imports[x.Name], se.Sel.Name
}
