package deploy

import (
	"context"
	"errors"
	"fmt"
	"github.com/flycl/flycl/app/intake"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
)

// ErrNeedW is returned by NewFromStats for statistics computed with an
// explicit W (not generated from a seed) when no W is given.
var ErrNeedW = errors.New("deploy: the statistics use an explicit W: give it to create a model from them")

// StatsConfig returns cfg with what statistics fix: the expansion (m, p,
// k, W's seed) and the top-k mode they were computed with. The other
// fields (the λ grid and its scale, the GCV method and scope) are cfg's.
func StatsConfig(cfg flycl.Config, sc modelfile.StatsConfig) (flycl.Config, error) {
	cfg.M, cfg.P, cfg.K, cfg.Seed = sc.M, sc.P, sc.K, sc.Seed
	var err error
	if cfg.TopK, err = projection.ParseTopKMode(sc.TopK); err != nil {
		return cfg, fmt.Errorf("deploy: statistics: %w", err)
	}
	return cfg, nil
}

// NewFromStats returns the untrained model that the statistics sf can
// teach (Model.LearnStatsFile): cfg with the statistics' expansion and top-k
// (StatsConfig), for their input dimension, with their pipeline. w is the
// W of statistics computed with an explicit one (ErrNeedW without it); a
// given w must have the statistics' sizes (its fingerprint is checked when
// the model learns them).
func NewFromStats(cfg flycl.Config, sf *modelfile.StatsFile, w *projection.Matrix) (*Model, error) {
	sc := sf.Config
	cfg, err := StatsConfig(cfg, sc)
	if err != nil {
		return nil, err
	}
	switch {
	case w != nil:
		if w.M != sc.M || w.P != sc.P || w.D != sc.InputDim {
			return nil, fmt.Errorf("deploy: W is %d×%d with p=%d, the statistics were computed with m=%d, d=%d, p=%d", w.M, w.D, w.P, sc.M, sc.InputDim, sc.P)
		}
	case sc.W == "explicit":
		return nil, ErrNeedW
	}
	return New(cfg, sc.InputDim, w, sf.Pipeline)
}

// LearnStatsFile teaches the model the task whose statistics are sf
// (modelfile.LearnStats: classes matched by name, λ by GCV on the
// statistics unless lambda > 0); a model without a pipeline takes the
// statistics'. A failure leaves the model as it was.
func (m *Model) LearnStatsFile(ctx context.Context, sf *modelfile.StatsFile, lambda float64) (flycl.TaskRecord, error) {
	rec, err := modelfile.LearnStats(ctx, m.Model, m.Pipeline, sf, lambda)
	if err != nil {
		return rec, err
	}
	if m.Pipeline == nil {
		m.Pipeline = sf.Pipeline
	}
	return rec, nil
}

// ShardStats computes the statistics of samples s of the input in (shard
// index of count) for the model: its float64 task statistics
// (flycl.Model.TaskStats), each class named by the input's class names,
// each sample by its key, with the samples' pipeline; the statistics
// files of a task's shards merge (modelfile.MergeStats) and teach a model
// (LearnStatsFile).
func (m *Model) ShardStats(ctx context.Context, in *intake.Input, s *intake.Samples, index, count int) (*modelfile.StatsFile, error) {
	if s.D != m.Model.InputDim() {
		return nil, fmt.Errorf("deploy: features have dimension %d, the model d=%d", s.D, m.Model.InputDim())
	}
	st, err := m.Model.TaskStats(ctx, s.X, s.Labels)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(st.Labels))
	for c, l := range st.Labels {
		names[c] = in.ClassName(l)
	}
	return modelfile.NewStatsFile(m.Model, s.Pipeline, st, names, s.Keys,
		modelfile.Shard{Index: index, Count: count, Source: in.Source})
}
