package main

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

// dataFlags select the training and test features.
type dataFlags struct {
	train, test string // feature files
	data        string // data set as kind[:path] (parsed once, by spec)
}

// spec parses --data and resolves the folder of mnist / fashion-mnist
// given without a path.
func (d *dataFlags) spec() (dataset.Spec, error) {
	s, err := dataset.ParseSpec(d.data)
	if err != nil {
		return s, flycl.Input(fmt.Errorf("--data: %w", err))
	}
	if s.Path == "" {
		if s.Path, err = greyDir(s.Kind); err != nil {
			return s, fmt.Errorf("--data %s: %w", d.data, err)
		}
	}
	return s, checkData(s)
}

// checkData stops at a data set that is not there, before any work, with
// how to get it.
func checkData(s dataset.Spec) error {
	if s.Path == "" {
		return nil
	}
	_, err := os.Stat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--data %s: %s does not exist; %s", s, s.Path, locate.DataHint(s.Kind))
	}
	return err
}

// given is --data as the user wrote it (no default path filled in); ""
// kind when it does not parse.
func (d *dataFlags) given() dataset.Spec {
	s, _ := dataset.ParseSpec(d.data)
	return s
}

// load returns the feature files, or the raw pixels of --data mnist /
// fashion-mnist, and a description naming the data as the user gave it.
func (d *dataFlags) load() (train, test *features.Set, desc string, err error) {
	switch {
	case d.data != "" && (d.train != "" || d.test != ""):
		return nil, nil, "", fmt.Errorf("give either --data or --train/--test, not both")
	case d.data != "":
		s, err := d.spec()
		if err != nil {
			return nil, nil, "", err
		}
		if !s.Grey() {
			return nil, nil, "", fmt.Errorf("--data %s: only mnist and fashion-mnist can be learned as raw pixels; give --backbone to extract features", d.data)
		}
		if train, err = s.Pixels("train"); err != nil {
			return nil, nil, "", err
		}
		if test, err = s.Pixels("test"); err != nil {
			return nil, nil, "", err
		}
		return train, test, d.data + " raw pixels", nil
	case d.train == "" || d.test == "":
		return nil, nil, "", fmt.Errorf("no data: give --train and --test feature files, or --data mnist")
	}
	if train, err = features.Load(d.train); err != nil {
		return nil, nil, "", err
	}
	if test, err = features.Load(d.test); err != nil {
		return nil, nil, "", err
	}
	return train, test, fmt.Sprintf("features %s / %s", d.train, d.test), nil
}
