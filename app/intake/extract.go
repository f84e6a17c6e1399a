package intake

import (
	"os"
	"path/filepath"

	"github.com/flycl/flycl/vision/dataset"
)

// SplitLess reports whether spec is a folder data set given as a
// directory with neither a train nor a test sub-directory: the
// DIR/<class>/<image> layout that OpenData reads for any split.
func SplitLess(spec dataset.Spec) bool {
	if spec.Kind != "folder" {
		return false
	}
	top, _ := statDir(spec.Path)
	train, _ := statDir(filepath.Join(spec.Path, "train"))
	test, _ := statDir(filepath.Join(spec.Path, "test"))
	return top && !train && !test
}

// OpenData opens a data set split for learning or testing and returns
// its cache key (dataset.Spec.Key). A folder data set given as a
// directory without a SPLIT sub-directory is read as DIR/<class>/<image>
// (how a user lays out "these 30 photos are a forklift").
func OpenData(spec dataset.Spec, split string) (dataset.Dataset, string, error) {
	if spec.Kind == "folder" && split != "" {
		sub, _ := statDir(filepath.Join(spec.Path, split))
		if top, _ := statDir(spec.Path); top && !sub {
			split = ""
		}
	}
	return OpenSplit(spec, split)
}

// OpenSplit opens exactly the split of spec (no fallback) and returns its
// cache key; split "" reads a folder data set's directory as
// DIR/<class>/<image>.
func OpenSplit(spec dataset.Spec, split string) (dataset.Dataset, string, error) {
	var ds dataset.Dataset
	var err error
	if split == "" {
		ds, err = dataset.OpenFolder(spec.Path)
	} else {
		ds, err = spec.Open(split)
	}
	if err != nil {
		return nil, "", err
	}
	key, err := spec.Key(split)
	if err != nil {
		return nil, "", err
	}
	return ds, key, nil
}

// statDir reports whether p is a folder.
func statDir(p string) (bool, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}
