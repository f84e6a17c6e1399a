package experiment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/lab/protocol"
)

// edgy is an oracle that reports a GCV choice per task: at the grid's
// lower edge on its first task, inside the grid afterwards.
type edgy struct {
	oracle
	tasks int
}

func (e *edgy) LearnTask(ctx context.Context, x []float32, labels []int) error {
	e.tasks++
	return e.oracle.LearnTask(ctx, x, labels)
}

func (e *edgy) LastLambdaChoice() (LambdaChoice, bool) {
	grid := []float64{1, 10, 100}
	c := LambdaChoice{Grid: grid, Scores: Floats([]float64{0.5, 0.7, 0.9}), Lambda: 1}
	if e.tasks > 1 {
		c.Scores, c.Lambda = Floats([]float64{0.7, 0.5, 0.9}), 10
	}
	c.Issue = flycl.LambdaCheck(grid, []float64{float64(c.Scores[0]), float64(c.Scores[1]), float64(c.Scores[2])}, c.Lambda)
	return c, true
}

// A λ at the edge of the grid is reported through the Warn hook as it
// happens and recorded in the run.
func TestGridEdgeWarning(t *testing.T) {
	train, test := blobs(1, 4, 10, 3, 4), blobs(2, 4, 5, 3, 4)
	ms := []Method{{"edgy", func(d int, _ int64) (Learner, error) {
		return &edgy{oracle: oracle{d: d, means: map[int][]float64{}}}, nil
	}}}
	var warned []Warning
	res, err := Execute(context.Background(), train, test, ms, Protocol{Order: protocol.OrderNone, Seeds: []int64{5}, Tasks: 2},
		Hooks{Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	if len(run.LambdaChoices) != 2 || run.LambdaChoices[0].Issue != flycl.LambdaLowEdge || run.LambdaChoices[1].Issue != "" {
		t.Fatalf("choices %+v", run.LambdaChoices)
	}
	if len(warned) != 1 || warned[0].Task != 1 || warned[0].Seed != 5 || !strings.Contains(warned[0].Text, "smallest value of the grid [1, 100]") {
		t.Fatalf("warnings %+v", warned)
	}
	if len(res.Warnings()) != 1 || res.Warnings()[0] != warned[0] {
		t.Errorf("recorded %+v", res.Warnings())
	}
	if res.Schema != SchemaVersion {
		t.Errorf("schema %d", res.Schema)
	}
}

// lambdaWarning's advice follows the choice: a λ at the lower edge that
// the solve had to raise anyway (Used) is not cured by a longer grid.
func TestLambdaWarningAdvice(t *testing.T) {
	grid := []float64{0.01, 1, 100}
	for _, c := range []struct {
		choice    LambdaChoice
		want, not string
	}{
		{LambdaChoice{Grid: grid, Lambda: 0.01, Issue: flycl.LambdaLowEdge}, "extend the grid downwards", "raised"},
		{LambdaChoice{Grid: grid, Lambda: 0.01, Used: 1, Issue: flycl.LambdaLowEdge}, "factors in float32 only from λ 1, which the classifier uses", "extend the grid"},
		{LambdaChoice{Grid: grid, Lambda: 100, Issue: flycl.LambdaHighEdge}, "extend the grid upwards", "raised"},
	} {
		got := lambdaWarning(c.choice)
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%+v: %q, want %q and not %q", c.choice, got, c.want, c.not)
		}
	}
}

func TestIdentify(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("abc"), 0o644)
	in, err := Identify("train", filepath.Join(dir, "a"))
	// SHA-256("abc") from FIPS 180-2, appendix B.1.
	if err != nil || in.Size != 3 || in.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || in.Role != "train" {
		t.Fatalf("%+v %v", in, err)
	}
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b"), []byte("xy"), 0o644)
	d1, err := Identify("data", dir)
	if err != nil || d1.Size != 5 {
		t.Fatalf("%+v %v", d1, err)
	}
	// A copy elsewhere has the same identity; a changed file does not.
	dir2 := t.TempDir()
	os.WriteFile(filepath.Join(dir2, "a"), []byte("abc"), 0o644)
	os.MkdirAll(filepath.Join(dir2, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir2, "sub", "b"), []byte("xy"), 0o644)
	d2, _ := Identify("data", dir2)
	if d2.SHA256 != d1.SHA256 {
		t.Error("identical folders differ")
	}
	os.WriteFile(filepath.Join(dir2, "sub", "b"), []byte("xz"), 0o644)
	if d3, _ := Identify("data", dir2); d3.SHA256 == d1.SHA256 {
		t.Error("a changed file is not seen")
	}
	if _, err := Identify("x", filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
	if got := Diff(&Config{Config: flycl.Config{M: 1}, Inputs: []Input{in}}, &Config{Config: flycl.Config{M: 1}, Inputs: []Input{in, d1}}); len(got) != 1 || !strings.HasPrefix(got[0], "input data:") {
		t.Errorf("Diff: %q", got)
	}
}
