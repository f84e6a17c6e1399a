package methods

import (
	"context"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/analysis"
	"github.com/flycl/flycl/lab/experiment"
)

// Prototypes records the prototype correlations of a run (the paper's
// Figure 3: analysis.FirstClassPrototypes) for flycl-lab run's heat maps: of
// the first Fly-CL run to finish, its first classes in arrival order, on
// the training samples the protocol learns (Protocol.TrainSet of Train,
// taken then). Use Finished as experiment.Hooks.Finished.
type Prototypes struct {
	Train    *features.Set
	Protocol experiment.Protocol

	Stages *analysis.Stages // nil until a Fly-CL run has finished
	Method string           // the run they come from
	Seed   int64
}

// Finished returns the hook that records them.
func (p *Prototypes) Finished(ctx context.Context) func(*experiment.Run, experiment.Learner) error {
	return func(run *experiment.Run, l experiment.Learner) error {
		fc, ok := l.(*FlyCL)
		if !ok || p.Stages != nil {
			return nil
		}
		st, err := analysis.FirstClassPrototypes(ctx, fc.Model, p.Protocol.TrainSet(p.Train), run.ClassOrder)
		if err != nil {
			return err
		}
		p.Stages, p.Method, p.Seed = st, run.Method, run.Seed
		return nil
	}
}
