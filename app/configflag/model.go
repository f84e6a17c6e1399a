package configflag

import (
	"context"
	"errors"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/projection"
)

// ErrFixed is wrapped by AgreeModel's errors: a model's configuration is
// fixed when it is created.
var ErrFixed = errors.New("a model's configuration is fixed when it is created")

// AgreeModel returns an error when a flag the user set differs from have,
// the configuration of an existing model (Agree, "the model has"); the
// error wraps the *flagbind.MismatchError and ErrFixed.
func (f *Flags) AgreeModel(have flycl.Config) error {
	if err := f.Agree(have, "the model has"); err != nil {
		return fmt.Errorf("%w: %w", err, ErrFixed)
	}
	return nil
}

// AgreeW returns an error when --m or --p was set to a value other than a
// given W's (read from file), or --w-seed was set at all: W fixes m and p,
// and has no seed.
func (f *Flags) AgreeW(w *projection.Matrix, file string) error {
	have := f.Given()
	have.M = w.M
	if err := f.Agree(have, "W from "+file+" has m ="); err != nil {
		return err
	}
	have.P = w.P
	if err := f.Agree(have, "W from "+file+" has p ="); err != nil {
		return err
	}
	if f.Changed(f.Flag("Seed")) {
		return fmt.Errorf("--%s and --w: W is given (%s), there is no seed to generate it from", f.Flag("Seed"), file)
	}
	return nil
}

// AgreeStats returns an error when a flag the user set for what
// statistics fix (deploy.StatsConfig: m, p, k, W's seed, the top-k mode)
// differs from the statistics' configuration sc. The other flags (the λ
// grid, GCV) are the new model's own and are not compared.
func (f *Flags) AgreeStats(sc modelfile.StatsConfig) error {
	have, err := deploy.StatsConfig(f.Given(), sc)
	if err != nil {
		return err
	}
	return f.Agree(have, "the statistics have")
}

// NewConfig returns the configuration of a new model for d-dimensional
// features: the flags' (Config), except that a model learning from images
// (through a backbone) takes deploy.DefaultImageConfig for every size and
// λ flag not given (--k follows a given --m: flycl.KForM), so that flycl
// learn, serve and the page create models sized for a few photos while
// flycl-lab run keeps the paper's m = 10000.
func (f *Flags) NewConfig(d int, images bool) (flycl.Config, error) {
	if !images {
		return f.Config()
	}
	img := deploy.DefaultImageConfig(d)
	changed := func(field string) bool { return f.Changed(f.Flag(field)) }
	g := f.Given() // the sizes not given are the image defaults', checked by Resolve
	if !changed("M") {
		g.M = img.M
	}
	switch {
	case changed("K"):
	case changed("M"):
		g.K = flycl.KForM(g.M)
	default:
		g.K = img.K
	}
	if !changed("P") {
		g.P = img.P
	}
	if !changed("Dual") {
		g.Dual = flycl.DualLimit(g.M)
	}
	cfg, err := f.Resolve(g)
	if err != nil {
		return cfg, err
	}
	if !changed("Lambdas") && !changed("LambdaScale") {
		cfg.Lambdas, cfg.LambdaScale = img.Lambdas, img.LambdaScale
		if !changed("WidenGrid") {
			cfg.WidenGrid = img.WidenGrid
		}
	}
	return cfg, nil
}

// NewModel returns the untrained model that flycl learn and stats create
// when the model file does not exist yet, for d-dimensional features with
// pipeline p (nil: feature vectors without a backbone): the configuration
// of NewConfig (the image defaults when p is given and no W), and the W
// of wFile when it is not "" (modelfile.ImportProjection), which must
// agree with the flags (AgreeW).
func (f *Flags) NewModel(d int, wFile string, p *modelfile.Pipeline) (*deploy.Model, error) {
	return f.NewModelAhead(context.Background(), d, wFile, p, nil)
}

// NewModelAhead is NewModel with the W generated ahead (StartNewModel)
// when it is that model's W (deploy.Ahead.New: the same model, bit for
// bit); ctx bounds the wait for it. A W file's model does not use it.
func (f *Flags) NewModelAhead(ctx context.Context, d int, wFile string, p *modelfile.Pipeline, ahead *deploy.Ahead) (*deploy.Model, error) {
	cfg, err := f.NewModelConfig(d, wFile, p)
	if err != nil {
		return nil, err
	}
	if err := deploy.CheckNewModel(cfg, d, procmem.Available()); err != nil {
		return nil, flycl.Input(fmt.Errorf("--m %d: %w", cfg.M, err))
	}
	if wFile == "" {
		return ahead.New(ctx, cfg, d, p)
	}
	ahead.Stop()
	w, err := modelfile.ImportProjection(wFile)
	if err != nil {
		return nil, err
	}
	if err := f.AgreeW(w, wFile); err != nil {
		return nil, err
	}
	return deploy.New(cfg, d, w, p)
}

// StartNewModel starts generating the W of the model NewModel creates
// for d-dimensional features through a backbone without a W file (the
// configuration of NewConfig(d, true)), for NewModelAhead to take once
// the images' features are extracted: W is made meanwhile instead of
// after (deploy.StartNew). nil when the flags make no configuration
// (NewModel reports them).
func (f *Flags) StartNewModel(ctx context.Context, d int) *deploy.Ahead {
	cfg, err := f.NewConfig(d, true)
	if err != nil {
		return nil
	}
	return deploy.StartNew(ctx, cfg, d)
}

// NewModelConfig is the configuration NewModel gives a new model (and
// so flycl learn and flycl stats, and flycl-beam, whose statistics merge
// with theirs): NewConfig with the image defaults when the features have a
// pipeline p (images through a backbone, or a feature file recording one)
// and no W file fixes m and p.
func (f *Flags) NewModelConfig(d int, wFile string, p *modelfile.Pipeline) (flycl.Config, error) {
	return f.NewConfig(d, p != nil && wFile == "")
}

// NewFromStats returns the untrained model that flycl merge creates from
// merged statistics sf when the model file does not exist yet
// (deploy.NewFromStats): the configuration a new model of the statistics'
// features gets (NewModelConfig: the image defaults' λ grid when they came
// through a backbone, as flycl learn and flycl-beam give it), whose flags
// for what the statistics fix must agree with them (AgreeStats), and the
// W of wFile when it is not "" (statistics computed with an explicit W
// need it: deploy.ErrNeedW).
func (f *Flags) NewFromStats(sf *modelfile.StatsFile, wFile string) (*deploy.Model, error) {
	cfg, err := f.NewModelConfig(sf.Config.InputDim, wFile, sf.Pipeline)
	if err != nil {
		return nil, err
	}
	if err := f.AgreeStats(sf.Config); err != nil {
		return nil, err
	}
	var w *projection.Matrix
	if wFile != "" {
		if w, err = modelfile.ImportProjection(wFile); err != nil {
			return nil, err
		}
	}
	m, err := deploy.NewFromStats(cfg, sf, w)
	if err != nil && w != nil {
		return nil, fmt.Errorf("--w %s: %w", wFile, err)
	}
	return m, err
}
