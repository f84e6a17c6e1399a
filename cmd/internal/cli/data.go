package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/dataset"
)

// DataFlags select the training and test features.
type DataFlags struct {
	Train, Test string // feature files
	Data        string // data set as kind[:path] (parsed once, by Spec)
}

// Spec parses --data and resolves the folder of mnist / fashion-mnist
// given without a path.
func (d *DataFlags) Spec() (dataset.Spec, error) {
	s, err := dataset.ParseSpec(d.Data)
	if err != nil {
		return s, flycl.Input(fmt.Errorf("--data: %w", err))
	}
	if s.Path == "" {
		if s.Path, err = GreyDir(s.Kind); err != nil {
			return s, fmt.Errorf("--data %s: %w", d.Data, err)
		}
	}
	return s, CheckData(s)
}

// CheckData stops at a data set that is not there, before any work, with
// how to get it.
func CheckData(s dataset.Spec) error {
	if s.Path == "" {
		return nil
	}
	_, err := os.Stat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return flycl.Input(fmt.Errorf("--data %s: %s does not exist; %s", s, s.Path, locate.DataHint(s.Kind)))
	}
	return err
}

// Given is --data as the user wrote it (no default path filled in); ""
// kind when it does not parse.
func (d *DataFlags) Given() dataset.Spec {
	s, _ := dataset.ParseSpec(d.Data)
	return s
}

// Load returns the feature files, or the raw pixels of --data mnist /
// fashion-mnist, and a description naming the data as the user gave it.
func (d *DataFlags) Load() (train, test *features.Set, desc string, err error) {
	switch {
	case d.Data != "" && (d.Train != "" || d.Test != ""):
		return nil, nil, "", fmt.Errorf("give either --data or --train/--test, not both")
	case d.Data != "":
		s, err := d.Spec()
		if err != nil {
			return nil, nil, "", err
		}
		if !s.Grey() {
			return nil, nil, "", fmt.Errorf("--data %s: only mnist and fashion-mnist can be learned as raw pixels; give --backbone to extract features", d.Data)
		}
		if train, err = s.Pixels("train"); err != nil {
			return nil, nil, "", err
		}
		if test, err = s.Pixels("test"); err != nil {
			return nil, nil, "", err
		}
		return train, test, d.Data + " raw pixels", nil
	case d.Train == "" || d.Test == "":
		return nil, nil, "", fmt.Errorf("no data: give --train and --test feature files, or --data mnist")
	}
	if train, err = features.Load(d.Train); err != nil {
		return nil, nil, "", err
	}
	if test, err = features.Load(d.Test); err != nil {
		return nil, nil, "", err
	}
	return train, test, fmt.Sprintf("features %s / %s", d.Train, d.Test), nil
}
