package report

import (
	"io"
	"path/filepath"

	"github.com/flycl/flycl/lab/experiment"
)

// ReadResults reads result.json files (ReadResult), in order.
func ReadResults(paths ...string) ([]*experiment.Result, error) {
	rs := make([]*experiment.Result, len(paths))
	for i, p := range paths {
		r, err := ReadResult(p)
		if err != nil {
			return nil, err
		}
		rs[i] = r
	}
	return rs, nil
}

// MergeFiles reads result.json files of separate runs of one experiment
// (e.g. one per seed) and merges them (Merge).
func MergeFiles(paths ...string) (*experiment.Result, error) {
	rs, err := ReadResults(paths...)
	if err != nil {
		return nil, err
	}
	return Merge(rs)
}

// CompareFiles writes Compare's table of result.json files of different
// experiments, a column per file named by its folder.
func CompareFiles(w io.Writer, paths ...string) error {
	rs, err := ReadResults(paths...)
	if err != nil {
		return err
	}
	names := make([]string, len(paths))
	sums := make([][]Summary, len(paths))
	for i, p := range paths {
		names[i], sums[i] = filepath.Base(filepath.Dir(p)), Summarize(rs[i])
	}
	return Compare(w, names, sums)
}
