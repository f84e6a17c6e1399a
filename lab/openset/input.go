package openset

import (
	"fmt"
	"os"
	"strings"

	"github.com/flycl/flycl/format/features"
)

// ParseSetSpec splits a feature set given as NAME=DIR (the --features of
// flycl-lab bench unknown and fewshot); both parts must be non-empty.
func ParseSetSpec(s string) (name, dir string, err error) {
	name, dir, ok := strings.Cut(s, "=")
	if !ok || name == "" || dir == "" {
		return "", "", fmt.Errorf("--features %q: want NAME=DIR", s)
	}
	return name, dir, nil
}

// LoadSets reads each NAME=DIR's DIR/train.npz and DIR/test.npz
// (features.LoadDir), keeping the first trainPer training and testPer
// test samples of each class (0: all). A bad spec is reported before any
// later set is read.
func LoadSets(specs []string, trainPer, testPer int) ([]Set, error) {
	var in []Set
	for _, s := range specs {
		name, dir, err := ParseSetSpec(s)
		if err != nil {
			return nil, err
		}
		tr, te, err := features.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		in = append(in, Set{Name: name, Train: tr.FirstPerClass(trainPer), Test: te.FirstPerClass(testPer)})
	}
	return in, nil
}

// LoadFewShotSets reads each NAME=DIR: the photos of DIR/train.npz,
// grouped by groups, and the other data set's DIR/test.npz.
func LoadFewShotSets(specs []string, groups map[string]string) ([]FewShotSet, error) {
	var in []FewShotSet
	for _, s := range specs {
		name, dir, err := ParseSetSpec(s)
		if err != nil {
			return nil, err
		}
		photos, other, err := features.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		in = append(in, FewShotSet{Name: name, Photos: photos, Groups: groups, Other: other})
	}
	return in, nil
}

// LoadGroups reads a groups file (ParseGroups); path "" gives the
// built-in grouping, ImageNet500Groups.
func LoadGroups(path string) (map[string]string, error) {
	if path == "" {
		return ParseGroups(strings.NewReader(ImageNet500Groups))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--groups: %w", err)
	}
	defer f.Close()
	groups, err := ParseGroups(f)
	if err != nil {
		return nil, fmt.Errorf("--groups %s: %w", path, err)
	}
	return groups, nil
}
