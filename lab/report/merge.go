package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/flycl/flycl/lab/experiment"
)

// ReadResult reads a result.json written by WriteAll (any schema version
// up to experiment.SchemaVersion).
func ReadResult(path string) (*experiment.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := DecodeResult(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return r, nil
}

// maxResultBytes bounds what DecodeResult reads: the largest committed
// result (10 methods × 5 seeds) is about 100 KB.
const maxResultBytes = 1 << 30

// legacyResult holds the fields of schema 0 (no version, untagged Go field
// names) whose names the tagged fields do not match; encoding/json matches
// the single-word names ("Method" to "method") by itself.
type legacyResult struct {
	Protocol struct{ TrainPerClass int }
	Runs     []struct {
		ClassOrder        []int
		TauPost, TauTrain []float64
		PeakRSS           int64
		TrainSizes        []int
	}
}

// DecodeResult reads a result.json from r and checks that it is
// complete and consistent, so that every summary of it can be computed.
func DecodeResult(r io.Reader) (*experiment.Result, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxResultBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxResultBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxResultBytes)
	}
	var head struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	var res experiment.Result
	switch {
	case head.Schema == nil:
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, err
		}
		var old legacyResult
		if err := json.Unmarshal(b, &old); err != nil {
			return nil, err
		}
		if len(old.Runs) != len(res.Runs) {
			return nil, fmt.Errorf("schema 0: %d runs read twice as %d", len(res.Runs), len(old.Runs))
		}
		res.Protocol.TrainPerClass = old.Protocol.TrainPerClass
		for i, o := range old.Runs {
			run := &res.Runs[i]
			run.ClassOrder, run.TauPost, run.TauTrain, run.PeakRSS, run.TrainSizes = o.ClassOrder, o.TauPost, o.TauTrain, o.PeakRSS, o.TrainSizes
		}
	case *head.Schema == experiment.SchemaVersion:
		d := json.NewDecoder(bytes.NewReader(b))
		if err := d.Decode(&res); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("schema version %d: this flycl reads versions 0 to %d (a newer flycl wrote it?)", *head.Schema, experiment.SchemaVersion)
	}
	if err := check(&res); err != nil {
		return nil, err
	}
	return &res, nil
}

// check verifies what the summaries, tables and plots index into.
func check(r *experiment.Result) error {
	if len(r.Runs) == 0 {
		return fmt.Errorf("no runs")
	}
	for i, run := range r.Runs {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("run %d (%s seed %d): %s", i, run.Method, run.Seed, fmt.Sprintf(format, a...))
		}
		T := len(run.Tasks)
		m := run.Matrix
		switch {
		case T == 0:
			return bad("no tasks")
		case m == nil || len(m.Total) != T || len(m.Correct) != T:
			return bad("incomplete: accuracy matrix does not have %d tasks", T)
		case len(run.TauPost) != T:
			return bad("incomplete: %d task times for %d tasks", len(run.TauPost), T)
		case len(run.TrainSizes) != T:
			return bad("incomplete: %d training sizes for %d tasks", len(run.TrainSizes), T)
		case len(run.TauTrain) != 0 && len(run.TauTrain) != T:
			return bad("%d extraction times for %d tasks", len(run.TauTrain), T)
		case len(run.Lambdas) > T || len(run.Stages) > T || len(run.LambdaChoices) > T:
			return bad("more λ or stage records than tasks")
		}
		for t, row := range m.Correct {
			if len(row) != t+1 {
				return bad("accuracy matrix row %d has %d entries, want %d", t+1, len(row), t+1)
			}
			if m.Total[t] < 0 {
				return bad("task %d has %d test samples", t+1, m.Total[t])
			}
			for j, c := range row {
				if c < 0 || c > m.Total[j] {
					return bad("%d of %d test samples of task %d correct", c, m.Total[j], j+1)
				}
			}
		}
		if !slices.Contains(r.Methods, run.Method) {
			return bad("method not listed in methods")
		}
	}
	return nil
}

// Merge combines results of the same experiment run separately (for
// example one seed per process, so a long experiment can resume): runs are
// concatenated, methods and seeds united in order of appearance. A method
// and seed present twice is an error, and so are results whose data,
// protocol or configuration (experiment.Config: m, p, k, grid, W, input
// files, ...) differ: the error lists every difference.
func Merge(rs []*experiment.Result) (*experiment.Result, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("merge: no results")
	}
	out := *rs[0]
	out.Runs, out.Methods, out.Protocol.Seeds = nil, nil, nil
	out.Seconds = 0
	seen := map[string]bool{}
	for i, r := range rs {
		if d := Differences(rs[0], r); len(d) > 0 {
			return nil, fmt.Errorf("merge: result %d is not the same experiment as result 1:\n  %s", i+1, strings.Join(d, "\n  "))
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

// Differences lists what makes b a different experiment from a: data
// dimensions, protocol (seeds aside) and configuration.
func Differences(a, b *experiment.Result) []string {
	var d []string
	if a.D != b.D {
		d = append(d, fmt.Sprintf("d: %d vs %d", a.D, b.D))
	}
	if a.Classes != b.Classes {
		d = append(d, fmt.Sprintf("classes: %d vs %d", a.Classes, b.Classes))
	}
	pa, pb := a.Protocol, b.Protocol
	pa.Seeds, pb.Seeds = nil, nil
	ja, _ := json.Marshal(pa)
	jb, _ := json.Marshal(pb)
	if !bytes.Equal(ja, jb) {
		d = append(d, fmt.Sprintf("protocol: %s vs %s", ja, jb))
	}
	return append(d, experiment.Diff(a.Config, b.Config)...)
}
