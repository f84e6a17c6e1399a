package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// The test data: four Gaussian classes in d dimensions; task 1 is cat
// and dog, task 2 bird and fish, task 3 more cats and dogs.
const (
	testD                  = 16
	testConfig             = `{"m":256,"p":8,"k":64,"seed":7,"lambda_scale":"relative"}`
	n1, n2, n3, nTest      = 80, 80, 30, 20
	classSpread, noiseRMS  = 3.0, 1.0
	onlineBatch            = 7
	fixedLambda            = 1234.5
	concurrentReadsPerTask = 150
)

var names12 = []string{"cat", "dog", "bird", "fish"}

type task struct {
	x []float32
	y []int32 // index into the task's names
}

func (t task) names(names []string) []string {
	out := make([]string, len(t.y))
	for i, l := range t.y {
		out[i] = names[l]
	}
	return out
}

// testData draws the tasks and the test set from fixed seeds.
func testData() (t1, t2, t3 task, xt []float32) {
	r := rand.New(rand.NewPCG(1, 2))
	centers := make([][]float32, 4)
	for c := range centers {
		centers[c] = make([]float32, testD)
		for j := range centers[c] {
			centers[c][j] = float32(r.NormFloat64() * classSpread)
		}
	}
	draw := func(n int, classes []int) task {
		var t task
		for i := 0; i < n; i++ {
			k := i % len(classes)
			for j := 0; j < testD; j++ {
				t.x = append(t.x, centers[classes[k]][j]+float32(r.NormFloat64()*noiseRMS))
			}
			t.y = append(t.y, int32(k))
		}
		return t
	}
	t1, t2, t3 = draw(n1, []int{0, 1}), draw(n2, []int{2, 3}), draw(n3, []int{0, 1})
	xt = draw(nTest, []int{0, 1, 2, 3}).x
	return
}

func writeData(t *testing.T, dir string, t1, t2, t3 task, xt []float32) {
	put := func(name string, v any) {
		var b bytes.Buffer
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("dims.i64", []int64{testD, n1, n2, n3, nTest})
	put("x1.f32", t1.x)
	put("x2.f32", t2.x)
	put("x3.f32", t3.x)
	put("xt.f32", xt)
	put("y1.i32", t1.y)
	put("y2.i32", t2.y)
	put("y3.i32", t3.y)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(testConfig), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goModel is the reference: the Go API (deploy, as flycl learn uses it),
// with the history an undo reads.
type goModel struct {
	t    *testing.T
	m    *deploy.Model
	hist []*modelfile.JournalEntry
}

func newGoModel(t *testing.T) *goModel {
	cfg, err := parseConfig(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	m, err := deploy.New(cfg, testD, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &goModel{t: t, m: m}
}

func (g *goModel) learn(tk task, names []string, opt deploy.LearnOptions) float64 {
	before := store.PriorOf(g.m)
	per := tk.names(names)
	res, err := g.m.Learn(context.Background(), tk.x, per, nil, opt)
	if err != nil {
		g.t.Fatal(err)
	}
	g.hist = append(g.hist, store.LearnEntry(g.m.Model.Version(), before, tk.x, per, testD, opt))
	return res.Lambda
}

func (g *goModel) undo() {
	e, err := store.UndoLast(context.Background(), g.m, g.hist)
	if err != nil {
		g.t.Fatal(err)
	}
	g.hist = append(g.hist, e)
}

func (g *goModel) scores(xt []float32) []float32 {
	s, err := g.m.Model.Predictor().Scores(context.Background(), xt)
	if err != nil {
		g.t.Fatal(err)
	}
	return s
}

// writeCLIModel writes a model file as flycl learn does: through the
// store, with a journal, one Update per learn.
func writeCLIModel(t *testing.T, path string, tasks []task, names [][]string) {
	ctx := context.Background()
	st, err := store.Open(ctx, path, &store.Options{Journal: true, Create: func() (*deploy.Model, error) {
		return newGoModel(t).m, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range tasks {
		err := st.Update(ctx, func(m *deploy.Model) (store.Change, error) {
			before := store.PriorOf(m)
			per := tk.names(names[i])
			if _, err := m.Learn(ctx, tk.x, per, nil, deploy.LearnOptions{}); err != nil {
				return store.Change{}, err
			}
			return store.Change{Entry: store.LearnEntry(m.Model.Version(), before, tk.x, per, testD, deploy.LearnOptions{})}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// buildLibrary builds libflycl.so and the C test program into dir.
func buildLibrary(t *testing.T, dir string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed: the C test program cannot be compiled (make deps installs it)")
	}
	so := filepath.Join(dir, "libflycl.so")
	build := exec.Command(goCommand(), "build", "-buildmode=c-shared", "-o", so, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildmode=c-shared: %v\n%s", err, out)
	}
	prog := filepath.Join(dir, "test_flycl")
	cc := exec.Command(gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-o", prog, "testdata/test_flycl.c",
		"-I.", "-L"+dir, "-lflycl", "-lpthread", "-lm", "-Wl,-rpath,"+dir)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return prog
}

// TestCProgram builds libflycl.so and testdata/test_flycl.c, runs the
// program on data written here, and checks what it prints against the Go
// API on the same data: the same λ and scores to the bit, the same top-k,
// answers, history and class names; loading the file flycl learn writes,
// and unlearning its journal's last learn; reads concurrent with a learn;
// an exact forget; unlearn; a fixed λ and online learning.
func TestCProgram(t *testing.T) {
	dir := t.TempDir()
	prog := buildLibrary(t, dir)
	t1, t2, t3, xt := testData()
	writeData(t, dir, t1, t2, t3, xt)
	writeCLIModel(t, filepath.Join(dir, "cli.flycl"), []task{t1, t2}, [][]string{names12[:2], names12[2:]})

	images := writeImages(t, dir)

	cmd := exec.Command(prog, dir)
	// the environment of this test (OpenBLAS's variables): the same kernels
	out, err := cmd.CombinedOutput()
	t.Logf("test_flycl output:\n%s", truncate(string(out), 1500))
	if err != nil {
		t.Errorf("test_flycl: %v", err)
	}
	got := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "FAIL") {
			t.Error(line)
		}
		if k, v, ok := strings.Cut(line, " "); ok {
			got[k] = strings.Fields(v)
		}
	}

	// the Go API on the same data
	g := newGoModel(t)
	l1 := g.learn(t1, names12[:2], deploy.LearnOptions{})
	l2 := g.learn(t2, names12[2:], deploy.LearnOptions{})
	checkFloat(t, "lambda1", got, l1)
	checkFloat(t, "lambda2", got, l2)
	s12 := g.scores(xt)
	checkBits(t, "scores12", got, s12)
	if want := g.m.Model.Classes().Names(); !slices.Equal(got["names"], want) {
		t.Errorf("names: C %q, Go %q", got["names"], want)
	}
	checkTop(t, got["top"], g.m, s12, 5)
	checkAnswers(t, got["answer"], g.m, xt)
	checkHistory(t, got["history"], g.m)
	checkInfo(t, got["info"], g.m)

	// the CLI's file, its last learn undone through its journal
	{
		path := filepath.Join(dir, "cli.flycl")
		m, err := store.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		hist, err := modelfile.ReadHistory(path, m.ID())
		if err != nil {
			t.Fatal(err)
		}
		c := &goModel{t: t, m: m, hist: hist}
		c.undo()
		checkBits(t, "cliundo", got, c.scores(xt))
	}

	// reads concurrent with a learn
	{
		q := newGoModel(t)
		q.learn(t1, names12[:2], deploy.LearnOptions{})
		q.learn(t3, names12[:2], deploy.LearnOptions{})
		checkBits(t, "scores13", got, q.scores(xt))
	}

	// the exact forget, with bird's samples as learned
	{
		xb := deploy.Select(t2.x, testD, t2.names(names12[2:]), "bird")
		f := newGoModel(t)
		f.learn(t1, names12[:2], deploy.LearnOptions{})
		f.learn(t2, names12[2:], deploy.LearnOptions{})
		if _, exact, err := f.m.Forget(context.Background(), "bird", xb, nil); err != nil || !exact {
			t.Fatalf("Go forget: exact %v, %v", exact, err)
		}
		checkBits(t, "forget", got, f.scores(xt))
	}

	// learn, learn, unlearn
	{
		u := newGoModel(t)
		u.learn(t1, names12[:2], deploy.LearnOptions{})
		u.learn(t2, names12[2:], deploy.LearnOptions{})
		u.undo()
		checkBits(t, "unlearn", got, u.scores(xt))
		u.learn(t2, names12[2:], deploy.LearnOptions{Lambda: fixedLambda})
		u.learn(t3, names12[:2], deploy.LearnOptions{Online: true, Batch: onlineBatch})
		var hc []map[string]any
		if err := json.Unmarshal([]byte(strings.Join(got["onlinehistory"], " ")), &hc); err != nil {
			t.Fatalf("onlinehistory: %v", err)
		}
		want := modelfile.Records(u.m.Model.History())
		if len(hc) != len(want) {
			t.Fatalf("online history: C %d records, Go %d", len(hc), len(want))
		}
		for i := range want {
			if l := hc[i]["lambda"].(float64); l != want[i].Lambda {
				t.Errorf("online history record %d: λ C %g, Go %g", i, l, want[i].Lambda)
			}
		}
	}
	if images != nil {
		checkImages(t, got, images)
	}
	if !strings.Contains(string(out), "done: 0 failures") {
		t.Error("the C program did not finish cleanly")
	}
	t.Run("DocExample", func(t *testing.T) { testDocExample(t, dir, images != nil) })
}

// testDocExample compiles the example of docs/C.md against the library
// and, where ONNX Runtime is installed, runs it on drawn photos: it
// writes a model file that loads with the cat and dog classes.
func testDocExample(t *testing.T, dir string, run bool) {
	doc, err := os.ReadFile("../../docs/C.md")
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(doc), "```c\n")
	code, _, ok2 := strings.Cut(code, "```")
	if !ok || !ok2 {
		t.Fatal("docs/C.md has no C example")
	}
	ex := t.TempDir()
	src := filepath.Join(ex, "example.c")
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ex, "example")
	cc := exec.Command("gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I.", "-o", bin, src, "-L"+dir, "-lflycl", "-Wl,-rpath,"+dir)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if !run {
		t.Log("compiled; not run (no ONNX Runtime)")
		return
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i, name := range []string{"cat1.jpg", "cat2.jpg", "dog1.jpg", "dog2.jpg"} {
		img, err := testimages.Draw([]string{"checks", "stripes"}[i/2], 96, r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := testimages.Encode(img, ".jpg")
		if err := os.WriteFile(filepath.Join(ex, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin)
	cmd.Dir = ex
	cmd.Env = append(os.Environ(), "FLYCL_ORT_LIB="+mustORT(t))
	out, err := cmd.CombinedOutput()
	t.Logf("example:\n%s", out)
	if err != nil {
		t.Fatalf("the example failed: %v", err)
	}
	m, err := store.Load(filepath.Join(ex, "pets.flycl"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Model.Classes().Names(), []string{"cat", "dog"}) || m.Pipeline == nil {
		t.Errorf("the example's model: classes %q, pipeline %+v", m.Model.Classes().Names(), m.Pipeline)
	}
}

func mustORT(t *testing.T) string {
	lib, err := findORT("")
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(lib)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n..."
}

func checkFloat(t *testing.T, key string, got map[string][]string, want float64) {
	t.Helper()
	v := got[key]
	if len(v) != 1 {
		t.Errorf("%s: C printed %q", key, v)
		return
	}
	f, err := strconv.ParseFloat(v[0], 64)
	if err != nil || f != want {
		t.Errorf("%s: C %s (%v), Go %g (%x)", key, v[0], err, want, math.Float64bits(want))
	}
}

func checkBits(t *testing.T, key string, got map[string][]string, want []float32) {
	t.Helper()
	v := got[key]
	if len(v) != len(want) {
		t.Errorf("%s: C printed %d values, Go has %d", key, len(v), len(want))
		return
	}
	bad := 0
	for i, w := range want {
		if v[i] != fmt.Sprintf("%08x", math.Float32bits(w)) {
			if bad++; bad <= 3 {
				t.Errorf("%s[%d]: C %s, Go %08x (%g)", key, i, v[i], math.Float32bits(w), w)
			}
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d of %d values differ", key, bad, len(want))
	}
}

// checkTop compares the C top-k ("class:scorebits") with a ranking of
// the Go scores, best first, ties in class order, -1 and NaN past the
// classes.
func checkTop(t *testing.T, got []string, m *deploy.Model, s []float32, k int) {
	t.Helper()
	nc := len(m.Model.Classes().Names())
	if len(got) != nTest*k {
		t.Fatalf("top: C printed %d entries, want %d", len(got), nTest*k)
	}
	for i := 0; i < nTest; i++ {
		row := s[i*nc : (i+1)*nc]
		idx := []int{}
		for j := range row {
			idx = append(idx, j)
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case row[a] > row[b]:
				return -1
			case row[a] < row[b]:
				return 1
			}
			return 0
		})
		for r := 0; r < k; r++ {
			want := fmt.Sprintf("-1:%08x", math.Float32bits(float32(math.NaN())))
			if r < nc {
				want = fmt.Sprintf("%d:%08x", idx[r], math.Float32bits(row[idx[r]]))
			}
			if g := got[i*k+r]; g != want {
				t.Errorf("top sample %d rank %d: C %s, Go %s", i, r, g, want)
			}
		}
	}
}

// checkHistory compares the task records, less their stage times.
func checkHistory(t *testing.T, got []string, m *deploy.Model) {
	t.Helper()
	var c, g []map[string]any
	if err := json.Unmarshal([]byte(strings.Join(got, " ")), &c); err != nil {
		t.Fatalf("history: %v", err)
	}
	b, _ := json.Marshal(modelfile.Records(m.Model.History()))
	json.Unmarshal(b, &g)
	for _, r := range append(c, g...) {
		delete(r, "seconds")
	}
	if !reflect.DeepEqual(c, g) {
		t.Errorf("history: C %v, Go %v", c, g)
	}
}

func checkInfo(t *testing.T, got []string, m *deploy.Model) {
	t.Helper()
	var in info
	if err := json.Unmarshal([]byte(strings.Join(got, " ")), &in); err != nil {
		t.Fatalf("info: %v", err)
	}
	if in.D != testD || !slices.Equal(in.Classes, m.Model.Classes().Names()) || !slices.Equal(in.Counts, m.Model.Classes().Counts()) ||
		in.Samples != m.Model.Samples() || in.Lambda != m.Model.Lambda() || in.Version != m.Model.Version() || in.Config.M != 256 {
		t.Errorf("info: %+v", in)
	}
}

// writeImages draws pictures of two patterns for the C program's image
// part, when ONNX Runtime is installed (make ort), and returns their
// paths (nil: the part is skipped).
func writeImages(t *testing.T, dir string) []string {
	if _, err := findORT(""); err != nil {
		t.Logf("the image part is skipped: %v", err)
		return nil
	}
	r := rand.New(rand.NewPCG(3, 4))
	var paths []string
	list := fmt.Sprintf("%d\n", imagesPerPattern*2)
	for i := 0; i < imagesPerPattern*2; i++ {
		img, err := testimages.Draw([]string{"discs", "stripes"}[i%2], 96, r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := testimages.Encode(img, ".jpg")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("img%d.jpg", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		list += fmt.Sprintf("%d %s\n", i%2, p)
	}
	if err := os.WriteFile(filepath.Join(dir, "images.txt"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	return paths
}

const imagesPerPattern = 4

// checkImages compares the C features with those of the extractor flycl
// learn opens (intake.ResolveExtractor, the built-in MobileNetV2), and
// checks the pipeline the saved model records.
func checkImages(t *testing.T, got map[string][]string, paths []string) {
	t.Helper()
	lib, _ := findORT("")
	if err := backbone.Init(lib); err != nil {
		t.Fatal(err)
	}
	e, err := intake.ResolveExtractor(context.Background(), intake.ExtractorOptions{Default: "mobilenetv2",
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) { return s.Open(zoo.FS(), "(built-in weights)") }})
	if err != nil {
		t.Fatal(err)
	}
	set, err := e.Files(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	checkBits(t, "imgfeatures", got, set.X)
	m, err := store.Load(filepath.Join(filepath.Dir(paths[0]), "images.flycl"))
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Pipeline; p == nil || p.Backbone != "mobilenetv2" || p.Dim != set.D {
		t.Errorf("the saved model's pipeline: %+v", p)
	}
}
