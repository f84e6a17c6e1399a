package report

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/flycl/flycl/experiment"
)

// ReadResult reads a result.json written by WriteAll.
func ReadResult(path string) (*experiment.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r experiment.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(r.Runs) == 0 {
		return nil, fmt.Errorf("read %s: no runs", path)
	}
	for i, run := range r.Runs {
		if run.Matrix == nil || len(run.Matrix.Total) != len(run.Tasks) || len(run.TauPost) != len(run.Tasks) {
			return nil, fmt.Errorf("read %s: run %d (%s seed %d) is incomplete", path, i, run.Method, run.Seed)
		}
	}
	return &r, nil
}

// Merge combines results of the same protocol run separately (for example
// one seed per process, so a long experiment can resume): runs are
// concatenated, methods and seeds united in order of appearance. A method
// and seed present twice is an error.
func Merge(rs []*experiment.Result) (*experiment.Result, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("merge: no results")
	}
	out := *rs[0]
	out.Runs, out.Methods, out.Protocol.Seeds = nil, nil, nil
	out.Seconds = 0
	seen := map[string]bool{}
	for _, r := range rs {
		if r.D != rs[0].D || r.Classes != rs[0].Classes {
			return nil, fmt.Errorf("merge: results differ in data (d=%d, %d classes vs d=%d, %d classes)", r.D, r.Classes, rs[0].D, rs[0].Classes)
		}
		for _, run := range r.Runs {
			key := fmt.Sprintf("%s|%d", run.Method, run.Seed)
			if seen[key] {
				return nil, fmt.Errorf("merge: %s seed %d appears twice", run.Method, run.Seed)
			}
			seen[key] = true
			out.Runs = append(out.Runs, run)
			if !slices.Contains(out.Methods, run.Method) {
				out.Methods = append(out.Methods, run.Method)
			}
			if !slices.Contains(out.Protocol.Seeds, run.Seed) {
				out.Protocol.Seeds = append(out.Protocol.Seeds, run.Seed)
			}
		}
		out.Seconds += r.Seconds
	}
	return &out, nil
}
