package methods

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/lab/baselines"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/projection"
)

// FlyCL is the experiment adapter of a flycl.Model.
type FlyCL struct{ Model *flycl.Model }

// LearnTask implements experiment.Learner.
func (f *FlyCL) LearnTask(ctx context.Context, x []float32, labels []int) error {
	_, err := f.Model.Learn(ctx, x, labels, nil)
	return err
}

// Predict implements experiment.Learner.
func (f *FlyCL) Predict(ctx context.Context, x []float32) ([]int, error) {
	return codec.BatchPredictor(f.Model).Predict(ctx, x)
}

// LastLambda implements experiment.Lambdaer.
func (f *FlyCL) LastLambda() float64 { return f.Model.Lambda() }

// LastStages implements experiment.StageTimer: the stage times of the last
// learning step.
func (f *FlyCL) LastStages() flycl.Stages {
	h := f.Model.History()
	if len(h) == 0 {
		return flycl.Stages{}
	}
	return h[len(h)-1].Stages
}

// LastLambdaChoice implements experiment.LambdaReporter: how GCV chose λ
// in the last learning step (ok false when λ was fixed).
func (f *FlyCL) LastLambdaChoice() (experiment.LambdaChoice, bool) {
	h := f.Model.History()
	if len(h) == 0 || h[len(h)-1].GCV == nil {
		return experiment.LambdaChoice{}, false
	}
	r := h[len(h)-1]
	c := experiment.LambdaChoice{Grid: r.Grid, Scores: experiment.Floats(r.GCV), Lambda: r.Lambda, Issue: r.LambdaIssue()}
	if r.RaisedFrom != 0 {
		c.Lambda, c.Used = r.RaisedFrom, r.Lambda
	}
	return c, true
}

// Online is Fly-CL's online variant for the runner: each task arrives in
// mini-batches and the classifier is updated and re-solved after each.
//
// A task larger than one mini-batch is streamed in an order shuffled with
// Seed (the run's seed), as an online learner sees a task's samples: the
// runner hands over a task's samples grouped by class, and mini-batches of
// one class would leave GCV (run on each mini-batch when Lambda is 0)
// nothing to separate. With a fixed Lambda the order does not matter: the
// statistics are sums, and the classifier equals batch Fly-CL's.
type Online struct {
	FlyCL
	Batch  int
	Lambda float64
	Seed   int64
}

// LearnTask feeds the task in mini-batches of o.Batch, shuffled as above.
func (o *Online) LearnTask(ctx context.Context, x []float32, labels []int) error {
	if o.Batch < 1 {
		return fmt.Errorf("flycl-online: mini-batch size must be at least 1, got %d", o.Batch)
	}
	d := o.Model.InputDim()
	n := len(labels)
	if len(x) != n*d {
		return fmt.Errorf("flycl-online: %d values for %d samples of dimension %d", len(x), n, d)
	}
	if n > o.Batch {
		perm := rand.New(rand.NewPCG(uint64(o.Seed), 0x6f6e6c696e65)).Perm(n) // "online"
		xs, ls := make([]float32, len(x)), make([]int, n)
		for i, j := range perm {
			copy(xs[i*d:(i+1)*d], x[j*d:(j+1)*d])
			ls[i] = labels[j]
		}
		x, labels = xs, ls
	}
	for lo := 0; lo < n; lo += o.Batch {
		hi := min(n, lo+o.Batch)
		if _, err := o.Model.Learn(ctx, x[lo*d:hi*d], labels[lo:hi], &flycl.LearnOptions{Lambda: o.Lambda}); err != nil {
			return err
		}
	}
	return nil
}

// Options are the settings of the methods.
type Options struct {
	FlyCL flycl.Config
	// W, if not nil, is Fly-CL's projection (e.g. imported from another
	// implementation) instead of one generated from FlyCL.Seed.
	W        *projection.Matrix
	RanPACM  int     // RanPAC projection size (default 10000)
	FOALDim  int     // F-OAL random map size (default 1000)
	FOALGam  float64 // F-OAL regularisation γ (default 1)
	RanDumbD int     // RanDumb embedding size (default 10000)
	// OnlineBatch is the mini-batch of flycl-online (default
	// deploy.DefaultOnlineBatch).
	OnlineBatch int
	// OnlineLambda is flycl-online's fixed λ; 0 chooses it by GCV on
	// every mini-batch.
	OnlineLambda float64
	// HebbianPasses is the number of Hebbian-rule passes per task of
	// flycl-hebbian (default 100).
	HebbianPasses int
}

func (o Options) withDefaults() Options {
	if o.RanPACM == 0 {
		o.RanPACM = 10000
	}
	if o.FOALDim == 0 {
		o.FOALDim = 1000
	}
	if o.FOALGam == 0 {
		o.FOALGam = 1
	}
	if o.RanDumbD == 0 {
		o.RanDumbD = 10000
	}
	if o.OnlineBatch == 0 {
		o.OnlineBatch = deploy.DefaultOnlineBatch
	}
	if o.HebbianPasses == 0 {
		o.HebbianPasses = 100
	}
	return o
}

func learner(name string, mk func(d int, seed int64) (experiment.Learner, error)) experiment.Method {
	return experiment.Method{Name: name, New: mk}
}

// newFlyCL returns an untrained Fly-CL model with configuration c for
// d-dimensional features: with the given W (Options.W) whenever c keeps its
// shape, else with W generated from c.Seed. Every method built on Fly-CL
// makes its model here, so they all share one configuration and one W.
func (o Options) newFlyCL(c flycl.Config, d int) (*flycl.Model, error) {
	if o.W != nil && c.P == o.W.P && c.M == o.W.M {
		if o.W.D != d {
			return nil, fmt.Errorf("imported W is %d×%d, features have d=%d", o.W.M, o.W.D, d)
		}
		return flycl.NewWithProjection(c, o.W)
	}
	return flycl.New(c, d)
}

// flyclVariant is Fly-CL with a modified configuration.
func flyclVariant(name string, o Options, edit func(c *flycl.Config, d int)) experiment.Method {
	return learner(name, func(d int, _ int64) (experiment.Learner, error) {
		c := o.FlyCL
		edit(&c, d)
		m, err := o.newFlyCL(c, d)
		if err != nil {
			return nil, err
		}
		return &FlyCL{Model: m}, nil
	})
}

// registry maps a method name to its constructor.
var registry = map[string]func(o Options) experiment.Method{
	"flycl": func(o Options) experiment.Method { return flyclVariant("Fly-CL", o, func(*flycl.Config, int) {}) },
	"ncm": func(o Options) experiment.Method {
		return learner("NCM", func(d int, _ int64) (experiment.Learner, error) { return baselines.NewNCM(d), nil })
	},
	"ranpac": func(o Options) experiment.Method {
		return learner("RanPAC (no FT)", func(d int, seed int64) (experiment.Learner, error) {
			return baselines.NewRanPAC(d, o.RanPACM, uint64(seed))
		})
	},
	"foal": func(o Options) experiment.Method {
		return learner("F-OAL", func(d int, seed int64) (experiment.Learner, error) {
			return baselines.NewFOAL(d, o.FOALDim, o.FOALGam, uint64(seed))
		})
	},
	"randumb": func(o Options) experiment.Method {
		return learner("RanDumb", func(d int, seed int64) (experiment.Learner, error) {
			return baselines.NewRanDumb(d, o.RanDumbD, uint64(seed))
		})
	},
	"joint": func(o Options) experiment.Method {
		return learner("Joint ridge (upper bound)", func(d int, _ int64) (experiment.Learner, error) {
			return baselines.NewJointFrom(func() (*flycl.Model, error) { return o.newFlyCL(o.FlyCL, d) }), nil
		})
	},
	"flycl-noproj": func(o Options) experiment.Method {
		return learner("Fly-CL w/o projection", func(d int, _ int64) (experiment.Learner, error) {
			return baselines.NewRawRidge(d, o.FlyCL.WithDefaults().Lambdas)
		})
	},
	"flycl-noridge": func(o Options) experiment.Method {
		return learner("Fly-CL w/o ridge (cosine on h')", func(d int, _ int64) (experiment.Learner, error) {
			m, err := o.newFlyCL(o.FlyCL, d)
			if err != nil {
				return nil, err
			}
			return baselines.NewCodeNCMFrom(m), nil
		})
	},
	"flycl-dense": func(o Options) experiment.Method {
		return flyclVariant("Fly-CL dense W", o, func(c *flycl.Config, d int) { c.P = d })
	},
	"flycl-online": func(o Options) experiment.Method {
		return learner(fmt.Sprintf("Fly-CL online (batch %d)", o.OnlineBatch), func(d int, seed int64) (experiment.Learner, error) {
			m, err := o.newFlyCL(o.FlyCL, d)
			if err != nil {
				return nil, err
			}
			return &Online{FlyCL: FlyCL{Model: m}, Batch: o.OnlineBatch, Lambda: o.OnlineLambda, Seed: seed}, nil
		})
	},
	"flycl-hebbian": func(o Options) experiment.Method {
		return learner(fmt.Sprintf("Fly-CL Hebbian (%d passes)", o.HebbianPasses), func(d int, _ int64) (experiment.Learner, error) {
			m, err := o.newFlyCL(o.FlyCL, d)
			if err != nil {
				return nil, err
			}
			return baselines.NewHebbianFrom(m, o.HebbianPasses)
		})
	},
	"flycl-magnitude": func(o Options) experiment.Method {
		return flyclVariant("Fly-CL magnitude top-k", o, func(c *flycl.Config, _ int) { c.TopK = projection.Magnitude })
	},
}

// Groups are names that stand for several methods.
var Groups = map[string][]string{
	"baselines": {"flycl", "ncm", "ranpac", "foal", "randumb", "joint"},
	"ablations": {"flycl", "flycl-noproj", "flycl-noridge", "flycl-dense", "flycl-magnitude"},
	"all":       {"flycl", "ncm", "ranpac", "foal", "randumb", "joint", "flycl-noproj", "flycl-noridge", "flycl-dense", "flycl-magnitude"},
}

// Names returns the method names accepted by Parse, sorted.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Parse turns a comma-separated list of names (or groups: baselines,
// ablations, all) into methods.
func Parse(list string, o Options) ([]experiment.Method, error) {
	if o.OnlineBatch < 0 {
		return nil, fmt.Errorf("online mini-batch size must be at least 1, got %d", o.OnlineBatch)
	}
	if o.OnlineLambda < 0 {
		return nil, fmt.Errorf("online λ must be positive (or 0 for GCV), got %g", o.OnlineLambda)
	}
	o = o.withDefaults()
	var out []experiment.Method
	var names []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(strings.ToLower(name))
		if g, ok := Groups[name]; ok {
			names = append(names, g...)
		} else if name != "" {
			names = append(names, name)
		}
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		mk, ok := registry[name]
		if !ok {
			return nil, fmt.Errorf("unknown method %q (known: %s; groups: baselines, ablations, all)", name, strings.Join(Names(), ", "))
		}
		out = append(out, mk(o))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no methods given (known: %s)", strings.Join(Names(), ", "))
	}
	return out, nil
}
