// Package experiment runs the class-incremental protocol: for every seed
// it orders the classes, cuts them into tasks, lets each method learn the
// tasks in turn, and evaluates it on the test samples of every task seen
// so far. It records the accuracy matrix, the time of every learning step
// and the peak memory, for the paper's tables and figures.
package experiment

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/flycl/flycl/features"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/metrics"
	"github.com/flycl/flycl/protocol"
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
// last LearnTask (seconds by stage name); the runner records them.
type StageTimer interface{ LastStages() map[string]float64 }

// Method names a learner and how to make a fresh one.
type Method struct {
	Name string
	// New returns an untrained learner for d-dimensional features; seed is
	// the run's seed, for methods with random parts.
	New func(d int, seed int64) (Learner, error)
}

// Protocol describes the class-incremental split.
type Protocol struct {
	Order     protocol.Order // flycl, pilot or none (ignored with List)
	List      []int          // explicit order of class indices, overrides Order
	Seeds     []int64
	Tasks     int // equal tasks; or set Init and Increment
	Init      int
	Increment int
	// TrainPerClass keeps only the first n training samples of each class
	// (in file order); 0 keeps all.
	TrainPerClass int
}

// TrainSet returns the training samples the protocol uses: the first
// TrainPerClass of every class, or all.
func (p Protocol) TrainSet(train *features.Set) *features.Set {
	return train.FirstPerClass(p.TrainPerClass)
}

// Run is one method on one seed.
type Run struct {
	Method     string
	Seed       int64
	ClassOrder []int   // labels in arrival order
	Tasks      [][]int // labels of each task
	Matrix     *metrics.Matrix
	TauPost    []float64            // seconds per task: learning without extraction
	TauTrain   []float64            // seconds per task including extraction (if known)
	Lambdas    []float64            `json:",omitempty"`
	Stages     []map[string]float64 `json:",omitempty"` // per task, for learners that report them
	PeakRSS    int64                // bytes, peak resident memory while this run learned
	TrainSizes []int                // training samples per task
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

// Result is a whole experiment.
type Result struct {
	Train, Test string // descriptions of the data
	D           int
	Classes     int
	Protocol    Protocol
	Methods     []string
	Runs        []Run
	Started     time.Time
	Seconds     float64
}

// Hooks are optional callbacks of Execute.
type Hooks struct {
	// Progress is called after every task.
	Progress func(Event)
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
	res := &Result{D: train.D, Classes: len(classes), Protocol: p, Started: time.Now()}
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
