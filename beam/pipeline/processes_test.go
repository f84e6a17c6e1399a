package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/ridge"
)

// The processes of TestSeparateProcesses are this test binary started
// again with $FLYCL_BEAM_TEST_ROLE: "jobs" serves prism's job service on
// $FLYCL_BEAM_TEST_PORT, "pool" an external worker pool there (and, when
// stopped, writes the process's WorkerStats to worker-stats.json in its
// working directory).
const (
	roleEnv     = "FLYCL_BEAM_TEST_ROLE"
	portEnv     = "FLYCL_BEAM_TEST_PORT"
	statsName   = "worker-stats.json"
	roleTimeout = 5 * time.Minute // a child never outlives this, whatever its parent does
)

func serveRole(role string) int {
	flag.Parse()
	beam.Init()
	port, err := strconv.Atoi(os.Getenv(portEnv))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: %v\n", portEnv, os.Getenv(portEnv), err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, roleTimeout)
	defer cancel()
	// end with the test process, whatever happens to it (Pdeathsig would
	// fire when the parent's forking thread ends, not the process)
	ctx, orphaned := context.WithCancel(ctx)
	go func(parent int) {
		for range time.Tick(500 * time.Millisecond) {
			if os.Getppid() != parent {
				orphaned()
				return
			}
		}
	}(os.Getppid())
	switch role {
	case "jobs":
		err = ServeJobService(ctx, port)
	case "pool":
		err = ServeWorkerPool(ctx, port)
		if b, jerr := json.Marshal(ProcessWorkerStats()); jerr == nil {
			err = errors.Join(err, os.WriteFile(statsName, b, 0o644))
		}
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		return 1
	}
	return 0
}

// freePort returns a port that was free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// child is one process of the test: this binary in a role, in its own
// working directory with its own HOME and TMPDIR.
type child struct {
	dir  string
	cmd  *exec.Cmd
	done chan error
	once sync.Once
}

func startChild(t *testing.T, role string, port int, dir string) *child {
	t.Helper()
	for _, d := range []string{dir, filepath.Join(dir, "home"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := cutEnv(kv)
		if k != "HOME" && k != "TMPDIR" && k != roleEnv && k != portEnv {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+filepath.Join(dir, "home"), "TMPDIR="+filepath.Join(dir, "tmp"),
		roleEnv+"="+role, portEnv+"="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{dir: dir, cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait(); logf.Close() }()
	t.Cleanup(func() { c.stop(t) })
	deadline := time.Now().Add(90 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			conn.Close()
			return c
		}
		select {
		case err := <-c.done:
			c.done <- err
			b, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("%s process exited before serving port %d: %v\n%s", role, port, err, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s process: nothing serves port %d after 90 s", role, port)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the process: SIGTERM, then SIGKILL after 15 s.
func (c *child) stop(t *testing.T) { c.once.Do(func() { c.terminate(t) }) }

func (c *child) terminate(t *testing.T) {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		c.done <- err
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		err := <-c.done
		c.done <- err
		t.Logf("process in %s did not stop on SIGTERM in 15 s: killed", c.dir)
	}
}

func cutEnv(kv string) (string, string, bool) {
	for i := range len(kv) {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// clusters returns n samples of dimension d around one random centre per
// class (labels 0..classes-1, in turns), reproducible from seed.
func clusters(n, d, classes int, seed uint64) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 1))
	centres := make([]float32, classes*d)
	for i := range centres {
		centres[i] = float32(r.NormFloat64())
	}
	x := make([]float32, n*d)
	labels := make([]int, n)
	for i := range n {
		labels[i] = i % classes
		for j := range d {
			x[i*d+j] = centres[labels[i]*d+j] + float32(0.8*r.NormFloat64())
		}
	}
	return x, labels
}

// TestSeparateProcesses runs the pipeline on a feature file across
// separate processes on 127.0.0.1: prism's job service in one, the SDK
// harness in two external worker pools (EXTERNAL environments), each
// process in its own working directory with its own HOME and TMPDIR; the
// test process only submits. Extraction branch 0 runs in worker 0, branch
// 1 in worker 1; summing the pieces and the final step (GCV, solve, model
// file) in worker 0, so worker 1's statistics reach it only encoded,
// through the runner. The worker pools' own tallies show that each
// summed exactly its branch's samples.
//
// The model and statistics must equal, bit for bit: the in-process prism
// run of the same pipeline, and the single-process statistics learn of the
// same two shards (Model.TaskStats of each, added, Model.Learn with LearnOptions.Stats: what
// flycl stats twice and flycl merge compute). Bit equality is exact here,
// not luck: each branch is one shard accumulated in one batch, so each
// worker's sums are those of TaskStats of its shard (the same codes, by
// the sparse gather, and the same dgemm), and two addends give the same
// float64 sum in either order. Against the single-process LearnTask of all
// samples (float32 GCV and solve) λ and predictions are identical and G
// agrees to float32 rounding.
func TestSeparateProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three processes")
	}
	const n, d, classes, nTest = 240, 48, 4, 200
	x, labels := clusters(n+nTest, d, classes, 11)
	xTest := x[n*d:]
	x, labels = x[:n*d], labels[:n]
	dir := t.TempDir()
	featPath := filepath.Join(dir, "train.npz")
	if err := features.Save(featPath, &features.Set{X: x, N: n, D: d, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	cfg := flycl.Config{M: 600, P: 12, K: 150, Seed: 5, Lambdas: []float64{1, 10, 1e2, 1e3, 1e4, 1e5, 1e6}}
	half := n / 2
	base := Options{Features: featPath, Config: cfg, Shards: 2, BatchSize: 256, BlockRows: 250, Branches: 2, Workers: 1, FailShard: -1}
	plan, err := MakePlan(base)
	if err != nil {
		t.Fatal(err)
	}

	// in-process prism (loopback worker)
	inproc := base
	inproc.Out, inproc.StatsOut = filepath.Join(dir, "inprocess.flycl"), filepath.Join(dir, "inprocess.stats")
	inModel, err := runPipeline(t, inproc)
	if err != nil {
		t.Fatal(err)
	}

	// separate processes
	sep := base
	sep.Out, sep.StatsOut = filepath.Join(dir, "separate.flycl"), filepath.Join(dir, "separate.stats")
	workers, counters, err := runSeparately(t, filepath.Join(dir, "separate"), sep, plan)
	if err != nil {
		t.Fatalf("separate processes: %v", err)
	}
	// The job's counters, as the runner summed them over the two worker
	// processes, count what the pools' own tallies below count: every
	// sample once and one bundle per branch. Each pool numbers its metrics
	// itself; without the pools' qualified short ids (shortids.go) prism
	// would resolve one pool's ids with the other's meanings.
	if counters["images"] != n || counters["bundles"] != 2 {
		t.Errorf("job counters: %d samples in %d bundles, want %d in 2 (all counters: %v)", counters["images"], counters["bundles"], n, counters)
	}
	for i, c := range workers {
		c.stop(t)
		b, err := os.ReadFile(filepath.Join(c.dir, statsName))
		if err != nil {
			t.Fatalf("worker %d wrote no tally: %v", i, err)
		}
		var ws WorkerStats
		if err := json.Unmarshal(b, &ws); err != nil {
			t.Fatal(err)
		}
		t.Logf("worker %d: %+v", i, ws)
		if ws.Samples != int64(half) || ws.Bundles != 1 || ws.EncodedBytes == 0 {
			t.Errorf("worker %d summed %d samples in %d bundles and encoded %d bytes, want its branch's %d samples in 1 bundle",
				i, ws.Samples, ws.Bundles, ws.EncodedBytes, half)
		}
		// each worker's own stage clocks: both extracted and expanded
		// their branch; the final step ran on the first worker only
		if ws.Stages.Extract <= 0 || ws.Stages.Expand <= 0 || ws.Stages.Encode <= 0 {
			t.Errorf("worker %d stage times %v: want extraction, expansion and encoding measured", i, ws.Stages)
		}
		if (ws.Stages.Final > 0) != (i == 0) {
			t.Errorf("worker %d final step %v: want it on worker 0 only", i, ws.Stages.Final)
		}
	}
	sepModel, err := modelfile.LoadModel(sep.Out)
	if err != nil {
		t.Fatal(err)
	}

	// single process: statistics of the two shards, added, learned
	ref, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	refStats, err := ref.TaskStats(context.Background(), x[:half*d], labels[:half])
	if err != nil {
		t.Fatal(err)
	}
	second, err := ref.TaskStats(context.Background(), x[half*d:], labels[half:])
	if err != nil {
		t.Fatal(err)
	}
	if err := refStats.Merge(second); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Learn(context.Background(), nil, nil, &flycl.LearnOptions{Stats: refStats}); err != nil {
		t.Fatal(err)
	}

	for _, f := range []string{inproc.StatsOut, sep.StatsOut} {
		sf, err := modelfile.LoadStats(f)
		if err != nil {
			t.Fatal(err)
		}
		sameStats(t, filepath.Base(f), refStats, sf.Stats)
	}
	sameModel(t, "in-process prism", ref, inModel, xTest)
	sameModel(t, "separate processes", ref, sepModel, xTest)

	// the single-process learn of all samples at once (float32)
	whole, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whole.Learn(context.Background(), x, labels, nil); err != nil {
		t.Fatal(err)
	}
	compareModels(t, whole, sepModel, xTest)
}

// runSeparately starts prism's job service and two worker pools (each in
// its own folder under dir) and runs the pipeline opt on them; it returns
// the worker pools, still running, and the job's counters of namespace
// flycl (summed over transforms).
func runSeparately(t *testing.T, dir string, opt Options, plan *Plan) ([]*child, map[string]int64, error) {
	t.Helper()
	jobsPort, pool0, pool1 := freePort(t), freePort(t), freePort(t)
	jobs := startChild(t, "jobs", jobsPort, filepath.Join(dir, "jobs"))
	workers := []*child{
		startChild(t, "pool", pool0, filepath.Join(dir, "worker-0")),
		startChild(t, "pool", pool1, filepath.Join(dir, "worker-1")),
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, opt, plan)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := RunOnWorkers(ctx, p, "127.0.0.1:"+strconv.Itoa(jobsPort),
		[]string{"localhost:" + strconv.Itoa(pool0), "localhost:" + strconv.Itoa(pool1)})
	if err != nil {
		for _, c := range append(workers, jobs) {
			b, _ := os.ReadFile(filepath.Join(c.dir, "log"))
			t.Logf("%s log:\n%s", c.dir, b)
			c.stop(t)
		}
		return nil, nil, err
	}
	t.Logf("separate processes: job ran in %.1f s", time.Since(start).Seconds())
	counters := map[string]int64{}
	for _, r := range res.Metrics().AllMetrics().Counters() {
		if r.Key.Namespace == "flycl" {
			counters[r.Key.Name] += r.Result()
		}
	}
	return workers, counters, nil
}

// sameStats asserts bit equality of two statistics.
func sameStats(t *testing.T, what string, want, got *ridge.Stats) {
	t.Helper()
	if got.M != want.M || got.N != want.N || !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Counts, want.Counts) {
		t.Fatalf("%s: m=%d n=%d labels %v counts %v, want m=%d n=%d %v %v", what, got.M, got.N, got.Labels, got.Counts, want.M, want.N, want.Labels, want.Counts)
	}
	if i := firstBitDiff(want.G, got.G); i >= 0 {
		t.Errorf("%s: G[%d] = %v, single process %v", what, i, got.G[i], want.G[i])
	}
	if i := firstBitDiff(want.S, got.S); i >= 0 {
		t.Errorf("%s: S[%d] = %v, single process %v", what, i, got.S[i], want.S[i])
	}
}

func firstBitDiff[F float32 | float64](a, b []F) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) {
			return i
		}
	}
	return -1
}

// sameModel asserts bit equality of two models: G, S, counts, λ, GCV
// scores, coefficients and predictions.
func sameModel(t *testing.T, what string, want, got *flycl.Model, xTest []float32) {
	t.Helper()
	if got.Lambda() != want.Lambda() || got.Samples() != want.Samples() || !slices.Equal(got.Classes().Labels(), want.Classes().Labels()) {
		t.Fatalf("%s: λ=%g samples %d classes %v, single process λ=%g %d %v", what, got.Lambda(), got.Samples(), got.Classes().Labels(), want.Lambda(), want.Samples(), want.Classes().Labels())
	}
	wh, gh := want.History(), got.History()
	if len(wh) != 1 || len(gh) != 1 || firstBitDiff(wh[0].GCV, gh[0].GCV) >= 0 {
		t.Errorf("%s: GCV %v, single process %v", what, gh, wh)
	}
	ws, gs := want.Snapshot(), got.Snapshot()
	for i := range want.Config().M {
		if j := firstBitDiff(codec.LowerRow(ws, i), codec.LowerRow(gs, i)); j >= 0 {
			t.Fatalf("%s: G[%d][%d] = %v, single process %v", what, i, j, codec.LowerRow(gs, i)[j], codec.LowerRow(ws, i)[j])
		}
	}
	if i := firstBitDiff(ws.S(), gs.S()); i >= 0 {
		t.Errorf("%s: S[%d] differs", what, i)
	}
	if i := firstBitDiff(ws.Coef(), gs.Coef()); i >= 0 {
		t.Errorf("%s: coefficient %d differs", what, i)
	}
	pw, err := want.Predictor().Predict(context.Background(), xTest)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := got.Predictor().Predict(context.Background(), xTest)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pw, pg) {
		t.Errorf("%s: predictions differ", what)
	}
	t.Logf("%s: λ=%g, G, S, counts, GCV, coefficients and %d predictions bit-identical to the single process", what, got.Lambda(), len(pw))
}
