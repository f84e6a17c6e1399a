package experiment

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/lab/metrics"
	"github.com/flycl/flycl/lab/protocol"
)

// Learner is a class-incremental method.
type Learner interface {
	// LearnTask learns one task's training samples (n×d, row-major).
	LearnTask(ctx context.Context, x []float32, labels []int) error
	// Predict returns a label for each of the n×d test samples.
	Predict(ctx context.Context, x []float32) ([]int, error)
}

// Lambdaer is implemented by learners that choose a ridge parameter per
// task; the runner records it.
type Lambdaer interface{ LastLambda() float64 }

// StageTimer is implemented by learners that time the stages of their
// last LearnTask; the runner records them.
type StageTimer interface{ LastStages() flycl.Stages }

// LambdaReporter is implemented by learners that choose λ by GCV: the
// choice of their last LearnTask (ok false when λ was fixed). The runner
// records it and warns when it is at an edge of the grid.
type LambdaReporter interface {
	LastLambdaChoice() (c LambdaChoice, ok bool)
}

// LambdaChoice is how a ridge parameter was chosen by GCV for one task.
type LambdaChoice struct {
	Grid   []float64   `json:"grid"`   // λ values scored
	Scores []JSONFloat `json:"scores"` // GCV per grid value; null where not finite
	Lambda float64     `json:"lambda"` // the λ GCV chose
	// Used is set when the factorisation needed a larger λ than the one
	// chosen: the classifier was solved with Used instead of Lambda.
	Used  float64           `json:"used,omitempty"`
	Issue flycl.LambdaIssue `json:"issue,omitempty"` // see flycl.LambdaCheck
}

// Warning is something the runner found suspicious in a run.
type Warning struct {
	Method string `json:"method"`
	Seed   int64  `json:"seed"`
	Task   int    `json:"task"` // 1-based; 0 for the whole run
	Text   string `json:"text"`
}

func (w Warning) String() string {
	if w.Task > 0 {
		return fmt.Sprintf("%s seed %d task %d: %s", w.Method, w.Seed, w.Task, w.Text)
	}
	return fmt.Sprintf("%s seed %d: %s", w.Method, w.Seed, w.Text)
}

// Method names a learner and how to make a fresh one.
type Method struct {
	Name string
	// New returns an untrained learner for d-dimensional features; seed is
	// the run's seed, for methods with random parts.
	New func(d int, seed int64) (Learner, error)
}

// Protocol describes the class-incremental split.
type Protocol struct {
	Order     protocol.Order `json:"order"` // flycl, pilot or none (ignored with List)
	List      []int          `json:"list"`  // explicit order of class indices, overrides Order
	Seeds     []int64        `json:"seeds"`
	Tasks     int            `json:"tasks"` // equal tasks; or set Init and Increment
	Init      int            `json:"init"`
	Increment int            `json:"increment"`
	// TrainPerClass keeps only the first n training samples of each class
	// (in file order); 0 keeps all.
	TrainPerClass int `json:"train_per_class"`
}

// TrainSet returns the training samples the protocol uses: the first
// TrainPerClass of every class, or all.
func (p Protocol) TrainSet(train *features.Set) *features.Set {
	return train.FirstPerClass(p.TrainPerClass)
}

// Run is one method on one seed.
type Run struct {
	Method     string          `json:"method"`
	Seed       int64           `json:"seed"`
	ClassOrder []int           `json:"class_order"` // labels in arrival order
	Tasks      [][]int         `json:"tasks"`       // labels of each task
	Matrix     *metrics.Matrix `json:"matrix"`
	TauPost    []float64       `json:"tau_post"`            // seconds per task: learning without extraction
	TauTrain   []float64       `json:"tau_train,omitempty"` // seconds per task including extraction (if known)
	Lambdas    []float64       `json:"lambdas,omitempty"`   // λ per task, for ridge learners
	// LambdaChoices are the GCV choices per task, for learners that
	// report them (LambdaReporter).
	LambdaChoices []LambdaChoice `json:"lambda_choices,omitempty"`
	Stages        []flycl.Stages `json:"stages,omitempty"` // per task, for learners that time them
	PeakRSS       int64          `json:"peak_rss"`         // bytes, peak resident memory while this run learned
	TrainSizes    []int          `json:"train_sizes"`      // training samples per task
	Warnings      []Warning      `json:"warnings,omitempty"`
}

// Event reports progress.
type Event struct {
	Method      string
	Seed        int64
	Task, Of    int // task just learned (1-based) of how many
	Acc         float64
	TauPost     float64
	Step, Steps int // overall progress
}

// SchemaVersion is the version of the result.json format written by
// this package (docs/RESULTS-FORMAT.md). Version 0 is the untagged format
// of the files written before versions existed; readers convert it.
const SchemaVersion = 1

// Result is a whole experiment: what result.json holds.
type Result struct {
	Schema   int      `json:"schema"` // SchemaVersion when written
	Train    string   `json:"train"`  // descriptions of the data
	Test     string   `json:"test"`
	D        int      `json:"d"`
	Classes  int      `json:"classes"`
	Protocol Protocol `json:"protocol"`
	// Config is everything besides the seeds that decides the outcome:
	// the methods' settings and the identity of the input files. Nil in
	// files of schema 0.
	Config  *Config   `json:"config,omitempty"`
	Methods []string  `json:"methods"`
	Runs    []Run     `json:"runs"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
}

// Warnings returns the warnings of every run.
func (r *Result) Warnings() []Warning {
	var out []Warning
	for _, run := range r.Runs {
		out = append(out, run.Warnings...)
	}
	return out
}

// Hooks are optional callbacks of Execute.
type Hooks struct {
	// Progress is called after every task.
	Progress func(Event)
	// Warn is called with every warning as it is found (they are also
	// recorded in the run).
	Warn func(Warning)
	// Finished is called with each run and its trained learner, before the
	// learner is dropped (for example to analyse or save it).
	Finished func(*Run, Learner) error
}

// Execute runs every method on every seed.
func Execute(ctx context.Context, train, test *features.Set, methods []Method, p Protocol, hooks Hooks) (*Result, error) {
	progress := hooks.Progress
	if train.D != test.D {
		return nil, fmt.Errorf("experiment: train features have %d dimensions, test features %d", train.D, test.D)
	}
	if len(methods) == 0 {
		return nil, fmt.Errorf("experiment: no methods")
	}
	if len(p.Seeds) == 0 {
		p.Seeds = []int64{1993}
	}
	classes := train.Classes()
	known := make(map[int]bool, len(classes))
	for _, c := range classes {
		known[c] = true
	}
	for i, l := range test.Labels {
		if !known[l] {
			return nil, fmt.Errorf("experiment: test sample %d has label %d, which no training sample has", i, l)
		}
	}
	train = p.TrainSet(train)
	res := &Result{Schema: SchemaVersion, D: train.D, Classes: len(classes), Protocol: p, Started: time.Now()}
	for _, m := range methods {
		res.Methods = append(res.Methods, m.Name)
	}
	steps, step := 0, 0
	for range p.Seeds {
		tasks, err := split(classes, p, 0)
		if err != nil {
			return nil, err
		}
		steps += len(tasks) * len(methods)
	}
	for _, seed := range p.Seeds {
		tasks, err := split(classes, p, seed)
		if err != nil {
			return nil, err
		}
		order := slices.Concat(tasks...)
		// Per-task data is the same for every method: gather it once.
		type data struct {
			x      []float32
			labels []int
		}
		trainT, testT := make([]data, len(tasks)), make([]data, len(tasks))
		totals := make([]int, len(tasks))
		for t, cls := range tasks {
			trainT[t].x, trainT[t].labels, _ = train.Subset(cls)
			testT[t].x, testT[t].labels, _ = test.Subset(cls)
			totals[t] = len(testT[t].labels)
			if len(trainT[t].labels) == 0 {
				return nil, fmt.Errorf("experiment: task %d (classes %v) has no training samples", t+1, cls)
			}
		}
		for _, m := range methods {
			freeMemory()
			procmem.ResetPeak()
			learner, err := m.New(train.D, seed)
			if err != nil {
				return nil, fmt.Errorf("experiment: %s: %w", m.Name, err)
			}
			run := Run{Method: m.Name, Seed: seed, ClassOrder: order, Tasks: tasks, Matrix: metrics.NewMatrix(totals)}
			for t := range tasks {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				start := time.Now()
				if err := learner.LearnTask(ctx, trainT[t].x, trainT[t].labels); err != nil {
					return nil, fmt.Errorf("experiment: %s seed %d task %d: %w", m.Name, seed, t+1, err)
				}
				tau := time.Since(start).Seconds()
				run.TauPost = append(run.TauPost, tau)
				run.TrainSizes = append(run.TrainSizes, len(trainT[t].labels))
				if train.ExtractSeconds > 0 {
					share := train.ExtractSeconds * float64(len(trainT[t].labels)) / float64(train.N)
					run.TauTrain = append(run.TauTrain, tau+share)
				}
				if l, ok := learner.(Lambdaer); ok {
					run.Lambdas = append(run.Lambdas, l.LastLambda())
				}
				if st, ok := learner.(StageTimer); ok {
					run.Stages = append(run.Stages, st.LastStages())
				}
				if lr, ok := learner.(LambdaReporter); ok {
					if c, ok := lr.LastLambdaChoice(); ok {
						run.LambdaChoices = append(run.LambdaChoices, c)
						if c.Issue != "" {
							w := Warning{Method: m.Name, Seed: seed, Task: t + 1, Text: lambdaWarning(c)}
							run.Warnings = append(run.Warnings, w)
							if hooks.Warn != nil {
								hooks.Warn(w)
							}
						}
					}
				}
				for i := 0; i <= t; i++ {
					if totals[i] == 0 {
						continue
					}
					pred, err := learner.Predict(ctx, testT[i].x)
					if err != nil {
						return nil, fmt.Errorf("experiment: %s seed %d: evaluate task %d: %w", m.Name, seed, i+1, err)
					}
					correct := 0
					for j, y := range pred {
						if y == testT[i].labels[j] {
							correct++
						}
					}
					run.Matrix.Set(t, i, correct)
				}
				step++
				if progress != nil {
					progress(Event{Method: m.Name, Seed: seed, Task: t + 1, Of: len(tasks),
						Acc: run.Matrix.MeanAcc(t), TauPost: tau, Step: step, Steps: steps})
				}
			}
			run.PeakRSS = procmem.Peak()
			if hooks.Finished != nil {
				if err := hooks.Finished(&run, learner); err != nil {
					return nil, err
				}
			}
			res.Runs = append(res.Runs, run)
			learner = nil
		}
	}
	res.Seconds = time.Since(res.Started).Seconds()
	return res, nil
}

// lambdaWarning explains a questionable GCV choice.
func lambdaWarning(c LambdaChoice) string {
	lo, hi := slices.Min(c.Grid), slices.Max(c.Grid)
	switch c.Issue {
	case flycl.LambdaNotFinite:
		return fmt.Sprintf("GCV is not finite on the grid [%g, %g] (λ %g taken blindly): the features' scale is probably extreme (statistics overflow); rescale them or use a relative λ grid", lo, hi, c.Lambda)
	case flycl.LambdaFlat:
		return fmt.Sprintf("GCV is flat on the grid [%g, %g]: λ has no effect there, so λ %g is arbitrary; the grid does not match the features' scale (give --lambdas or a relative λ grid)", lo, hi, c.Lambda)
	case flycl.LambdaLowEdge:
		if c.Used > c.Lambda {
			// A smaller grid value cannot help: the solve already had to
			// raise λ for G + λI to factor in float32.
			return fmt.Sprintf("GCV chose λ %g, the smallest value of the grid [%g, %g], but G + λI of the accumulated statistics factors in float32 only from λ %g, which the classifier uses: a smaller grid value would be raised the same way", c.Lambda, lo, hi, c.Used)
		}
		return fmt.Sprintf("GCV chose λ %g, the smallest value of the grid [%g, %g]: the best λ may be smaller; extend the grid downwards", c.Lambda, lo, hi)
	case flycl.LambdaHighEdge:
		return fmt.Sprintf("GCV chose λ %g, the largest value of the grid [%g, %g]: the best λ may be larger; extend the grid upwards", c.Lambda, lo, hi)
	}
	return fmt.Sprintf("λ %g: %s", c.Lambda, c.Issue)
}

// split orders the class labels for one seed and cuts them into tasks.
func split(classes []int, p Protocol, seed int64) ([][]int, error) {
	var perm []int
	if p.List != nil {
		if err := protocol.CheckPermutation(p.List, len(classes)); err != nil {
			return nil, err
		}
		perm = p.List
	} else {
		var err error
		if perm, err = protocol.ClassOrder(p.Order, len(classes), seed); err != nil {
			return nil, err
		}
	}
	order := make([]int, len(perm))
	for i, c := range perm {
		order[i] = classes[c]
	}
	if p.Init > 0 || p.Increment > 0 {
		return protocol.Split(order, p.Init, max(p.Increment, 1))
	}
	t := p.Tasks
	if t <= 0 {
		t = 1
	}
	return protocol.EqualTasks(order, t)
}

func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}
