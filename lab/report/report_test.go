package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/metrics"
)

// result builds a two-seed, two-task result with known accuracies:
// seed 1: a = [[1], [.5, 1]]; seed 2: a = [[1], [1, .5]] (10 test samples per task).
func result() *experiment.Result {
	mk := func(seed int64, c10, c11 int) experiment.Run {
		m := metrics.NewMatrix([]int{10, 10})
		m.Set(0, 0, 10)
		m.Set(1, 0, c10)
		m.Set(1, 1, c11)
		return experiment.Run{Method: "A", Seed: seed, Tasks: [][]int{{0}, {1}}, Matrix: m,
			TauPost: []float64{1, 3}, TrainSizes: []int{5, 5}, Lambdas: []float64{1e6, 1e7}, PeakRSS: 100e6}
	}
	return &experiment.Result{Methods: []string{"A"}, Runs: []experiment.Run{mk(1, 5, 10), mk(2, 10, 5)}}
}

func TestSummaryAndTable(t *testing.T) {
	sums := Summarize(result())
	s := sums[0]
	// A_T: seed 1 (.5+1)/2 = 75%, seed 2 75%; Ā: (100+75)/2 = 87.5 both;
	// BWT: seed 1 -50, seed 2 0 → mean -25, sample std 35.36.
	if s.Last.Mean != 75 || s.Last.Std != 0 || s.Average.Mean != 87.5 || s.BWT.Mean != -25 {
		t.Fatalf("%+v", s)
	}
	if s.TauPost.Mean != 2 || s.TauTrain.N != 0 || s.PeakMB.Mean != 100 || len(s.Curve) != 2 || s.Curve[1].Mean != 75 {
		t.Fatalf("%+v", s)
	}
	var b bytes.Buffer
	Markdown(&b, sums)
	want := "| A | 75.00 ± 0.00 | 87.50 ± 0.00 | 87.50 ± 0.00 | -25.00 ± 35.36 | 25.00 ± 35.36 | 2.000 ± 0.000 | n/a | 100 ± 0 |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("table:\n%s\nwant row\n%s", b.String(), want)
	}
}

func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteAll(dir, result()); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "result.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 5 || rows[2][0] != "A" || rows[2][2] != "2" || rows[2][11] != "0.500000 1.000000" || rows[2][10] != "1e+07" {
		t.Fatalf("csv: %v %v", rows, err)
	}
	var js map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	if err := json.Unmarshal(b, &js); err != nil || js["summary"] == nil || js["schema"] != float64(experiment.SchemaVersion) {
		t.Fatalf("json: %v", err)
	}
	for _, name := range []string{"curves.png"} {
		checkPNG(t, filepath.Join(dir, name))
	}
	hp := filepath.Join(dir, "heat.png")
	id := mat.NewDense(2, 2, []float64{1, -0.5, -0.5, 1})
	if err := Heatmaps(hp, []string{"a", "b"}, []*mat.Dense{id, id}, HeatmapInfo{Caption: "Fly-CL, seed 1", Labels: []string{"3", "7"}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, hp)
	sp := filepath.Join(dir, "sweep.png")
	if err := Sweep(sp, "k", []float64{1, 2}, Summarize(result())[:1]); err == nil {
		t.Error("sweep with mismatched lengths: no error")
	}
	if err := Sweep(sp, "k", []float64{1}, Summarize(result())); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, sp)
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 100 {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestReadAndMerge(t *testing.T) {
	dir := t.TempDir()
	r := result()
	a, b := *r, *r
	a.Runs, b.Runs = r.Runs[:1], r.Runs[1:]
	for i, part := range []*experiment.Result{&a, &b} {
		if _, err := WriteAll(filepath.Join(dir, fmt.Sprint(i)), part); err != nil {
			t.Fatal(err)
		}
	}
	var parts []*experiment.Result
	for i := 0; i < 2; i++ {
		p, err := ReadResult(filepath.Join(dir, fmt.Sprint(i), "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	m, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	got, want := Summarize(m)[0], Summarize(r)[0]
	if got.Seeds != 2 || got.BWT != want.BWT || got.Average != want.Average {
		t.Errorf("merged summary %+v, want %+v", got, want)
	}
	if _, err := Merge([]*experiment.Result{parts[0], parts[0]}); err == nil {
		t.Error("duplicate seed: no error")
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"Runs": [{"Method": "A"}]}`), 0o644)
	if _, err := ReadResult(filepath.Join(dir, "bad.json")); err == nil {
		t.Error("incomplete run: no error")
	}
}

// Compare lays the hand-computed summaries of result() side by side.
func TestCompare(t *testing.T) {
	a := Summarize(result()) // method A: Ā 87.5 ± 0, A_T 75, 2 seeds
	b := []Summary{{Method: "B", Seeds: 1, Average: metrics.Summarize([]float64{60}), Last: metrics.Summarize([]float64{40})}}
	var buf bytes.Buffer
	if err := Compare(&buf, []string{"x", "y"}, [][]Summary{a, b}); err != nil {
		t.Fatal(err)
	}
	want := "| Method | x | y |\n|---|---:|---:|\n" +
		"| A | 87.50 ± 0.00 (75.00) | – |\n" +
		"| B | – | 60.00 (40.00) |\n\nSeeds: x 2, y 1.\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if err := Compare(&buf, []string{"x"}, [][]Summary{a, b}); err == nil {
		t.Error("names and experiments differ in number: no error")
	}
	if err := Compare(&buf, []string{"x"}, [][]Summary{append(a, a...)}); err == nil {
		t.Error("method twice: no error")
	}
}
