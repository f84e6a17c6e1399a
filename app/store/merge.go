package store

import (
	"context"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// Merge teaches the model the task of merged statistics (flycl merge:
// deploy.Model.LearnStatsFile; λ by GCV on them, or lambda when > 0) as
// one durable change, recorded in the journal's history as a merge (an
// undo does not reach past it). As with Update, a change saved but not
// recorded returns its record with an error wrapping ErrNotRecorded.
func (s *Store) Merge(ctx context.Context, merged *modelfile.StatsFile, lambda float64) (flycl.TaskRecord, error) {
	var rec flycl.TaskRecord
	err := s.Update(ctx, func(m *deploy.Model) (Change, error) {
		var err error
		if rec, err = m.LearnStatsFile(ctx, merged, lambda); err != nil {
			return Change{}, fmt.Errorf("merge (%s unchanged): %w", s.path, err)
		}
		return Change{Entry: MergeEntry(m.Model.Version(), merged.Names, m.Model.InputDim())}, nil
	})
	return rec, err
}
