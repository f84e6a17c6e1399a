package fetch

import (
	"os"
	"path/filepath"
)

// The folders assets go to when no folder is given (relative to the
// working folder; docs/REPRODUCE.md uses them), by Kind.
const (
	DefaultWeightsDir = "weights"
	DefaultDataDir    = "data"
)

// Dir is the folder the asset goes to: dir when given, else
// DefaultWeightsDir or DefaultDataDir by its kind.
func (a Asset) Dir(dir string) string {
	if dir != "" {
		return dir
	}
	if a.Kind == Weights {
		return DefaultWeightsDir
	}
	return DefaultDataDir
}

// SizeText is the published size, "~" and an approximate one, or "?".
func (a Asset) SizeText() string {
	switch {
	case a.Size > 0:
		return HumanBytes(a.Size)
	case a.ApproxSize > 0:
		return "~" + HumanBytes(a.ApproxSize)
	}
	return "?"
}

// Planned is an asset of a plan, in its folder, with what is already
// there.
type Planned struct {
	Asset
	Dir string
	// Present: the asset (its file, or its converted split's folder) is
	// there; it is still verified before a run.
	Present bool
	// Partial is the size of an interrupted download a fetch resumes
	// after (0: none).
	Partial int64
}

// Plan is what reproducing a setting takes: the assets to fetch, the
// command it runs and the time the docs' measurements give it.
type Plan struct {
	Setting Setting
	Assets  []Planned // the backbone's weights, then the data set
	Command []string  // flycl's arguments
	// Estimate is DocsMeasured's estimate, with the image count of a
	// split already converted in the data folder (its lock file).
	Estimate Estimate
}

// PlanSetting plans reproducing s with the weights in weightsDir and the
// data sets in dataDir, looking only at what is on disk.
func PlanSetting(s Setting, weightsDir, dataDir string) (*Plan, error) {
	b, d, err := s.Assets()
	if err != nil {
		return nil, err
	}
	line, err := s.Command(weightsDir, dataDir)
	if err != nil {
		return nil, err
	}
	p := &Plan{Setting: s, Command: line}
	images := 0
	for _, pa := range []Planned{{Asset: b, Dir: weightsDir}, {Asset: d, Dir: dataDir}} {
		if _, err := os.Stat(pa.Path(pa.Dir)); err == nil {
			pa.Present = true
		} else if st, err := os.Stat(filepath.Join(pa.Dir, pa.File+".part")); err == nil {
			pa.Partial = st.Size()
		}
		if pa.Split != "" {
			if l, err := ReadLock(pa.Dir); err == nil {
				if sp, ok := l.Splits[pa.Split]; ok {
					images = sp.Files
				}
			}
		}
		p.Assets = append(p.Assets, pa)
	}
	p.Estimate = DocsMeasured.Estimate(s, images)
	return p, nil
}
