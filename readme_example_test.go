package flycl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
)

// Using flycl as a library, as the README shows it: features from any
// framework (numpy.savez("train.npz", features=F, labels=y)), one task
// learned, predictions, and the model saved to resume later. (Compiled,
// not run: it needs the two feature files.)
func Example_library() {
	ctx := context.Background()
	// README:begin
	train, _ := features.Load("train.npz") // features N×d float32, labels N
	test, _ := features.Load("test.npz")
	model, _ := flycl.New(flycl.DefaultConfig(), train.D)
	rec, _ := model.Learn(ctx, train.X, train.Labels, nil) // one task; call again for the next
	fmt.Println("λ chosen by GCV:", rec.Lambda)
	pred, _ := model.Predictor().Predict(ctx, test.X)
	fmt.Println("first test sample is class", pred[0])
	modelfile.SaveModel("model.flycl", model) // resume later, bit for bit
	// README:end
}

// TestREADMESnippet: the README's Go snippet is Example_library's body,
// so that it compiles (issue 11 §8).
func TestREADMESnippet(t *testing.T) {
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "// README:begin\n")
	body, _, _ = strings.Cut(body, "\t// README:end")
	var want []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		want = append(want, strings.TrimPrefix(l, "\t"))
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "```go"); n != 1 {
		t.Errorf("README has %d Go snippets; each must be a compiled Example checked here", n)
	}
	_, block, ok := strings.Cut(string(readme), "```go\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || strings.TrimRight(block, "\n") != strings.Join(want, "\n") {
		t.Errorf("README's Go snippet differs from Example_library; it should read:\n%s", strings.Join(want, "\n"))
	}
}

// TestREADMEIsAFrontPage: the README stays a front page (at most 250
// lines) that links every user doc, and keeps the quick starts that
// scripts/fresh-clone parses between its markers and runs on a fresh clone.
func TestREADMEIsAFrontPage(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("README has %d lines; a front page has at most 250 (move details to docs/)", n)
	}
	for name, want := range map[string][]string{
		"commands": {"make build", "make test"},
		"research": {"bin/flycl-lab run "},
		"deploy":   {"bin/flycl learn ", "bin/flycl predict ", "bin/flycl serve "},
	} {
		_, block, ok := strings.Cut(readme, "<!-- quickstart:"+name+" -->\n")
		block, _, closed := strings.Cut(block, "<!-- /quickstart -->")
		if !ok || !closed {
			t.Errorf("README lacks the quick start %q between <!-- quickstart:%s --> and <!-- /quickstart -->", name, name)
			continue
		}
		for _, w := range want {
			if !strings.Contains(block, w) {
				t.Errorf("quick start %q lacks %q", name, w)
			}
		}
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v %v", docs, err)
	}
	for _, d := range docs {
		if !strings.Contains(readme, "("+filepath.ToSlash(d)) {
			t.Errorf("README does not link %s", d)
		}
	}
}
