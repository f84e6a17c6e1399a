package flycl_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/features"
)

// Using flycl as a library, as the README shows it: features from any
// framework (numpy.savez("train.npz", features=F, labels=y)), one task
// learned, predictions, and the model saved to resume later through the
// store, the one writer of model files. (Compiled, not run: it needs the
// two feature files, and the default m = 10000; TestREADMESaveResumes
// runs its save and resume at a small m.)
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
	store.Save(ctx, "model.flycl", &deploy.Model{Model: model}) // resume later, bit for bit
	// README:end
}

// TestREADMESaveResumes: the README's save (store.Save of the learned
// model) gives a file that store.Load resumes bit for bit: the same
// scores as the model saved, which a second learn of the same task then
// moves exactly as it moves the model that never left memory.
func TestREADMESaveResumes(t *testing.T) {
	ctx := context.Background()
	const d, n = 8, 60
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := range y {
		y[i] = i % 3
		for j := 0; j < d; j++ {
			x[i*d+j] = float32((i*7+j*3)%11) / 11
		}
		x[i*d+y[i]] += 2
	}
	cfg := flycl.Config{M: 96, P: 4, K: 24, Seed: 1, Lambdas: []float64{0.1, 1, 10}}
	model, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.flycl")
	if err := store.Save(ctx, path, &deploy.Model{Model: model}); err != nil {
		t.Fatal(err)
	}
	back, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 2; step++ {
		want, err := model.Predictor().Scores(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		got, err := back.Model.Predictor().Scores(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Fatalf("step %d: the resumed model's scores differ from the saved model's", step)
		}
		if step == 0 {
			if _, err := model.Learn(ctx, x, y, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := back.Model.Learn(ctx, x, y, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
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
