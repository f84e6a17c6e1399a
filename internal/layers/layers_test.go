package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/flycl/flycl"

// groups from the bottom up; a package's group is the first whose prefix
// matches its folder (the root package's folder is ".").
var groups = []struct {
	name     string
	prefixes []string
}{
	{"internal", []string{"internal/"}},
	{"core", []string{".", "linalg", "projection", "ridge", "reject", "internal/codec", "internal/modelhook", "internal/statcmp"}},
	{"format", []string{"format/"}},
	{"vision", []string{"vision/"}},
	{"app", []string{"app/"}},
	{"lab", []string{"lab/"}},
	{"top", []string{"cmd/", "scripts/", "beam/", "python/"}},
}

// level is the group of a folder (relative to the repository root), or -1:
// the group of its longest matching prefix (internal/codec is the core's,
// the rest of internal/ is the floor).
func level(dir string) int {
	best, n := -1, -1
	for i, g := range groups {
		for _, p := range g.prefixes {
			q := strings.TrimSuffix(p, "/")
			match := dir == q || (q != "." && strings.HasPrefix(dir, q+"/"))
			if match && len(q) > n {
				best, n = i, len(q)
			}
		}
	}
	return best
}

// skipDir reports whether the walks of the tree skip the folder rel (name
// n): hidden folders, test data and node_modules anywhere; build outputs,
// docs and results at the root only.
func skipDir(rel, n string) bool {
	return rel != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") ||
		rel == "bin" || rel == "out" || rel == "docs" || rel == "results"
}

// goFiles calls fn with the path (from the working folder) and the
// slash-separated path from the repository root of every Go file of the
// repository that the walk does not skip (skipDir), tests included.
func goFiles(t *testing.T, fn func(path, rel string) error) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		return fn(path, rel)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// forbiddenInCore are the standard packages the core may not use.
func forbiddenInCore(path string) bool {
	return path == "net/http" || path == "image" || strings.HasPrefix(path, "image/")
}

// TestImportDirection walks every Go file of the repository (the Beam
// module's too), tests in the package included, and checks each import of
// this module against the groups: a package may import its own group and
// those below, never above. External test packages (package x_test) are
// users of the package and exempt.
func TestImportDirection(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	goFiles(t, func(path, rel string) error {
		dir := filepath.ToSlash(filepath.Dir(rel))
		from := level(dir)
		if from < 0 {
			if !seen[dir] {
				t.Errorf("%s: a package in no group: add its folder to a group here and in doc.go", dir)
				seen[dir] = true
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if strings.HasSuffix(rel, "_test.go") && strings.HasSuffix(f.Name.Name, "_test") {
			// an external test package (package x_test) uses the package
			// as its users do, examples included: it may import from any
			// group, as a program would. A test in the package itself
			// follows the package's direction.
			return nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if groups[from].name == "core" && forbiddenInCore(p) {
				t.Errorf("%s imports %s: the core knows nothing of pixels or HTTP", rel, p)
			}
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			to := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
			if to == "" {
				to = "."
			}
			if strings.HasPrefix(to, "beam/") || to == "beam" {
				continue // the Beam module's own packages
			}
			l := level(to)
			if l > from {
				t.Errorf("%s (%s) imports %s (%s): an import upwards", rel, groups[from].name, to, groups[l].name)
			}
		}
		return nil
	})
}

// TestGroupsCoverTree: every top-level folder with Go code is in a group, so
// that a new folder cannot escape the rule by its name.
func TestGroupsCoverTree(t *testing.T) {
	var dirs []string
	goFiles(t, func(_, rel string) error {
		dirs = append(dirs, filepath.ToSlash(filepath.Dir(rel)))
		return nil
	})
	sort.Strings(dirs)
	if len(dirs) < 20 {
		t.Fatalf("found Go code in only %d folders: the walk does not see the tree", len(dirs))
	}
	for _, d := range dirs {
		if level(d) < 0 {
			t.Errorf("%s is in no group", d)
		}
	}
}

// TestArchitectureNamesEveryPackage: docs/ARCHITECTURE.md has a line for
// every package folder (its path, or under its group its last element), so
// that a new package cannot go unmentioned there.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	seen := map[string]bool{}
	goFiles(t, func(_, rel string) error {
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." || seen[dir] {
			return nil
		}
		seen[dir] = true
		if !strings.Contains(doc, "`"+dir+"`") && !regexp.MustCompile("`[^`]*\\b"+regexp.QuoteMeta(filepath.Base(dir))+"\\b[^`]*`").MatchString(doc) {
			t.Errorf("%s: docs/ARCHITECTURE.md has no line for it", dir)
		}
		return nil
	})
	if len(seen) < 40 {
		t.Fatalf("found only %d package folders: the walk does not see the tree", len(seen))
	}
}
