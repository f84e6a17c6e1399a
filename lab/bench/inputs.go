package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/openset"
	"github.com/flycl/flycl/vision/backbone"
)

// LoadCameraSets reads the camera benchmark's feature sets: each spec is
// NAME=DIR (openset.ParseSetSpec) with DIR/train.npz and, optionally,
// DIR/test.npz; shots are NAME=N, the photos per class learned from
// train.npz in each split (needed where DIR has no test.npz). Errors name
// the setting and quote the value.
func LoadCameraSets(specs, shots []string) ([]CameraSet, error) {
	shot := map[string]int{}
	for _, s := range shots {
		name, v, ok := strings.Cut(s, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("--shots %q: want NAME=N, N ≥ 0", s)
		}
		shot[name] = n
	}
	var sets []CameraSet
	for _, s := range specs {
		name, dir, err := openset.ParseSetSpec(s)
		if err != nil {
			return nil, err
		}
		tr, err := features.Load(filepath.Join(dir, features.TrainFile))
		if err != nil {
			return nil, err
		}
		set := CameraSet{Name: name, Train: tr, Shots: shot[name]}
		te, err := features.Load(filepath.Join(dir, features.TestFile))
		switch {
		case err == nil:
			set.Test = te
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		case set.Shots == 0:
			return nil, fmt.Errorf("%s has no test.npz: give --shots %s=N to split train.npz", dir, name)
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// ServeImages are the serve benchmark's images: the .JPEG and .jpg files
// of dir, sorted; at least 40.
func ServeImages(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.JPEG"))
	if err != nil {
		return nil, err
	}
	jpgs, _ := filepath.Glob(filepath.Join(dir, "*.jpg"))
	files = append(files, jpgs...)
	sort.Strings(files)
	if len(files) < 40 {
		return nil, fmt.Errorf("--images %s: need at least 40 JPEG files, found %d", dir, len(files))
	}
	return files, nil
}

// ParsePrecisions reads a comma-separated list of precisions (fp32,
// int8) as the backbones and pipeline benchmarks take it, in order.
func ParsePrecisions(list string) ([]backbone.Precision, error) {
	var precs []backbone.Precision
	for _, p := range strings.Split(list, ",") {
		pr, err := backbone.ParsePrecision(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("--precision: %w", err)
		}
		precs = append(precs, pr)
	}
	return precs, nil
}
