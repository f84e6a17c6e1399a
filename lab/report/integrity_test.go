package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/metrics"
	"github.com/flycl/flycl/projection"
)

// A task whose classes have training samples but no test samples has no
// accuracy: its cells are n/a in result.csv and table.md, the summaries
// use the tasks that have test samples, and every file is written
// (before: "plotter: NaN data point" after writing NaN).
func TestNoTestSamplesIsNA(t *testing.T) {
	mk := func(seed int64) experiment.Run {
		m := metrics.NewMatrix([]int{10, 0, 10}) // task 2 has no test samples
		m.Set(0, 0, 10)
		m.Set(1, 0, 8)
		m.Set(2, 0, 6)
		m.Set(2, 2, 10)
		return experiment.Run{Method: "A", Seed: seed, Tasks: [][]int{{0}, {1}, {2}}, Matrix: m,
			TauPost: []float64{1, 1, 1}, TrainSizes: []int{5, 5, 5}}
	}
	r := &experiment.Result{Methods: []string{"A"}, Runs: []experiment.Run{mk(1), mk(2)}, Protocol: experiment.Protocol{Seeds: []int64{1, 2}}}
	dir := t.TempDir()
	sums, err := WriteAll(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	// A_1 = 100, A_2 = 80 (task 2 left out), A_3 = (60+100)/2 = 80;
	// Ā = 86.67; BWT over tasks 1 only: 60-100 = -40.
	s := sums[0]
	if s.Last.Mean != 80 || math.Abs(s.Average.Mean-260.0/3) > 1e-9 || s.BWT.Mean != -40 || s.Forgetting.Mean != 40 {
		t.Errorf("summary %+v", s)
	}
	csvText, _ := os.ReadFile(filepath.Join(dir, "result.csv"))
	if !strings.Contains(string(csvText), "1.000000 0.800000 n/a") && !strings.Contains(string(csvText), "0.800000 n/a") {
		t.Errorf("result.csv has no n/a cell:\n%s", csvText)
	}
	if strings.Contains(strings.ToLower(string(csvText)), "nan") {
		t.Errorf("result.csv has NaN:\n%s", csvText)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	if bytes.Contains(bytes.ToLower(b), []byte("nan")) {
		t.Error("result.json has NaN")
	}
	checkPNG(t, filepath.Join(dir, "curves.png"))
	// A method whose every task lacks test samples: n/a throughout.
	none := metrics.NewMatrix([]int{0})
	r2 := &experiment.Result{Methods: []string{"B"}, Runs: []experiment.Run{{Method: "B", Seed: 1, Tasks: [][]int{{0}}, Matrix: none, TauPost: []float64{1}, TrainSizes: []int{3}}}}
	if _, err := WriteAll(t.TempDir(), r2); err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	Markdown(&tb, Summarize(r2))
	if !strings.Contains(tb.String(), "| B | n/a | n/a | n/a | 0.00 | 0.00 |") {
		t.Errorf("table:\n%s", tb.String())
	}
}

func config(m int) *experiment.Config {
	return &experiment.Config{Config: flycl.Config{M: m, P: 300, K: 3000, Lambdas: []float64{1e6, 1e9}, TopK: projection.Signed}, Data: "features",
		Inputs: []experiment.Input{{Role: "train", Path: "a/train.npz", Size: 10, SHA256: "ab"}}}
}

// Results of different configurations are not merged silently: the error
// names every setting that differs. The same inputs at another path do
// merge.
func TestMergeRefusesOtherConfigurations(t *testing.T) {
	r := result()
	a, b := *r, *r
	a.Runs, b.Runs = r.Runs[:1], r.Runs[1:]
	a.Config, b.Config = config(10000), config(2000)
	b.Config.Inputs[0].SHA256 = "cd"
	_, err := Merge([]*experiment.Result{&a, &b})
	if err == nil {
		t.Fatal("m=10000 merged with m=2000")
	}
	for _, want := range []string{"m: 10000 vs 2000", "input train: 10 bytes, sha256 ab vs 10 bytes, sha256 cd"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	b.Config = config(10000)
	b.Config.Inputs[0].Path = "/elsewhere/train.npz"
	if _, err := Merge([]*experiment.Result{&a, &b}); err != nil {
		t.Errorf("same inputs at another path: %v", err)
	}
	b.Protocol.TrainPerClass = 100
	if _, err := Merge([]*experiment.Result{&a, &b}); err == nil || !strings.Contains(err.Error(), "protocol") {
		t.Errorf("different protocol: %v", err)
	}
	b.Protocol.TrainPerClass, b.Config = 0, nil
	if _, err := Merge([]*experiment.Result{&a, &b}); err == nil {
		t.Error("a result without configuration merged with one with")
	}
}

// Every result.json committed under results/ still reads (schema 0, the
// untagged format) and reproduces its committed table.md.
func TestCommittedResultsReproduce(t *testing.T) {
	paths, _ := filepath.Glob("../../results/*/result.json")
	more, _ := filepath.Glob("../../results/*/*/result.json")
	paths = append(paths, more...)
	if len(paths) == 0 {
		t.Skip("no committed results")
	}
	for _, p := range paths {
		r, err := ReadResult(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		want, err := os.ReadFile(filepath.Join(filepath.Dir(p), "table.md"))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var got bytes.Buffer
		Table(&got, r, Summarize(r))
		if got.String() != string(want) {
			t.Errorf("%s: table differs:\n%s\nwant\n%s", p, got.String(), want)
		}
		if r.Protocol.TrainPerClass == 0 && strings.Contains(p, "mnist") {
			t.Errorf("%s: train_per_class lost in the schema-0 conversion", p)
		}
		if len(r.Runs[0].ClassOrder) != r.Classes || len(r.Runs[0].TrainSizes) != len(r.Runs[0].Tasks) {
			t.Errorf("%s: run fields lost in the schema-0 conversion", p)
		}
		// Written again (schema 1) and read back, it gives the same table.
		dir := t.TempDir()
		if _, err := WriteAll(dir, r); err != nil {
			t.Fatal(err)
		}
		r2, err := ReadResult(filepath.Join(dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		Table(&again, r2, Summarize(r2))
		if again.String() != string(want) {
			t.Errorf("%s: schema-1 copy gives another table:\n%s", p, again.String())
		}
		if r2.Schema != experiment.SchemaVersion {
			t.Errorf("%s: schema %d after writing", p, r2.Schema)
		}
	}
}

func TestDecodeResultRejects(t *testing.T) {
	var good bytes.Buffer
	r := result()
	r.Schema = experiment.SchemaVersion
	json.NewEncoder(&good).Encode(r)
	if _, err := DecodeResult(bytes.NewReader(good.Bytes())); err != nil {
		t.Fatalf("good: %v", err)
	}
	for name, s := range map[string]string{
		"newer schema": strings.Replace(good.String(), `"schema":1`, `"schema":2`, 1),
		"no runs":      `{"schema":1,"methods":["A"],"runs":[]}`,
		"short row":    strings.Replace(good.String(), `"correct":[[10],[5,10]]`, `"correct":[[10],[5]]`, 1),
		"too many":     strings.Replace(good.String(), `"correct":[[10],[5,10]]`, `"correct":[[10],[5,11]]`, 1),
		"sizes":        strings.Replace(good.String(), `"train_sizes":[5,5]`, `"train_sizes":[5]`, 1),
		"not json":     `{"schema":1,`,
	} {
		if s == good.String() {
			t.Fatalf("%s: replacement did not apply", name)
		}
		if _, err := DecodeResult(strings.NewReader(s)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzDecodeResult: no input makes DecodeResult panic, and whatever it
// accepts can be summarised and tabulated.
func FuzzDecodeResult(f *testing.F) {
	var good bytes.Buffer
	r := result()
	r.Schema = experiment.SchemaVersion
	json.NewEncoder(&good).Encode(r)
	f.Add(good.Bytes())
	if b, err := os.ReadFile("../../results/mnist/seed1993/result.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"Runs":[{"Method":"A","Tasks":[[1]],"Matrix":{"Correct":[[0]],"Total":[0]},"TauPost":[1],"TrainSizes":[1]}],"Methods":["A"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeResult(bytes.NewReader(b))
		if err != nil {
			return
		}
		var w bytes.Buffer
		Table(&w, r, Summarize(r))
	})
}

func TestSweepTable(t *testing.T) {
	var b bytes.Buffer
	s := Summary{Average: metrics.Summarize([]float64{90}), Last: metrics.Summarize([]float64{80}), TauPost: metrics.Summarize([]float64{1})}
	if err := SweepTable(&b, "k", "mnist", []SweepRow{{M: 10000, P: 300, K: 500, Summary: s}}); err != nil {
		t.Fatal(err)
	}
	want := "Sensitivity to k on mnist\n\n| k | m | p | Ā (%) | A_T (%) | τ_post (s/task) |\n|---:|---:|---:|---:|---:|---:|\n| 500 | 10000 | 300 | 90.00 | 80.00 | 1.000 |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := SweepTable(&b, "q", "x", nil); err == nil {
		t.Error("unknown parameter: no error")
	}
}

func TestNiceTicks(t *testing.T) {
	for raw, want := range map[float64]float64{0.7: 1, 1.2: 2, 3: 5, 4.9: 5, 7: 10, 13: 20, 0.03: 0.05} {
		if got := niceStep(raw); math.Abs(got-want) > 1e-12 {
			t.Errorf("niceStep(%g) = %g, want %g", raw, got, want)
		}
	}
}

// The committed results/summary.md is reproduced from the committed
// merged result.json files (the order of scripts/results).
func TestCommittedSummaryReproduces(t *testing.T) {
	want, err := os.ReadFile("../../results/summary.md")
	if err != nil {
		t.Skip("no committed summary")
	}
	var names []string
	var sums [][]Summary
	for _, exp := range []string{"cifar10-mobilenetv2", "cifar10-squeezenet", "cifar10-mobilenetv2-nonorm", "cifar10-squeezenet-nonorm", "mnist", "fashion-mnist"} {
		r, err := ReadResult(filepath.Join("../../results", exp, "result.json"))
		if err != nil {
			continue
		}
		names, sums = append(names, exp), append(sums, Summarize(r))
	}
	var got bytes.Buffer
	if err := Compare(&got, names, sums); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("summary differs:\n%s\nwant\n%s", got.String(), want)
	}
}
