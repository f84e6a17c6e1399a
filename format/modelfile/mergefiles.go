package modelfile

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/flycl/flycl"
)

// MergeFiles reads the statistics files at paths and merges them
// (MergeStats), its errors naming the files: a file that is read but is
// not a statistics file is flycl.Input. It then asks CheckComplete whether
// the parts make one whole split of one source; when they do not, the
// merge is returned with that answer as incomplete, for the caller to
// refuse (the default of flycl merge) or accept (its --partial).
func MergeFiles(paths ...string) (merged *StatsFile, incomplete, err error) {
	parts := make([]*StatsFile, 0, len(paths))
	for _, p := range paths {
		f, err := LoadStats(p)
		if err != nil {
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				err = flycl.Input(err) // read, but not a statistics file
			}
			return nil, nil, err
		}
		parts = append(parts, f)
	}
	if merged, err = MergeStats(parts...); err != nil {
		// MergeStats counts parts from 1: name their files
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = fmt.Sprintf("part %d = %s", i+1, p)
		}
		return nil, nil, fmt.Errorf("%w (%s)", err, strings.Join(names, ", "))
	}
	return merged, CheckComplete(merged.Shards), nil
}
