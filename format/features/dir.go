package features

import "path/filepath"

// The files of a folder of features, as flycl extract --out DIR writes
// them.
const (
	TrainFile = "train.npz"
	TestFile  = "test.npz"
)

// LoadDir reads the training and test sets of a folder of features
// (TrainFile and TestFile in dir).
func LoadDir(dir string) (train, test *Set, err error) {
	if train, err = Load(filepath.Join(dir, TrainFile)); err != nil {
		return nil, nil, err
	}
	if test, err = Load(filepath.Join(dir, TestFile)); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}
