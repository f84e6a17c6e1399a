package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/features"
)

// TestSelectTask: the task is the n smallest labels with the first
// perClass samples of each, counted here by brute force over the set;
// too few classes or a negative count is an error naming the setting.
func TestSelectTask(t *testing.T) {
	// 4 classes, labels 3,1,0,2 repeating, 5 samples each; x = index
	s := &features.Set{D: 1}
	for i := 0; i < 20; i++ {
		s.X = append(s.X, float32(i))
		s.Labels = append(s.Labels, []int{3, 1, 0, 2}[i%4])
		s.N++
	}
	for _, c := range []struct {
		classes, perClass int
		err               string
	}{
		{2, 0, ""}, {3, 2, ""}, {4, 9, ""},
		{1, 0, "--classes 1: need at least 2"},
		{5, 0, "--classes 5: set has only 4 classes"},
		{2, -1, "--train-per-class -1"},
	} {
		task, err := SelectTask(s, "set", c.classes, c.perClass)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%d classes, %d per class: %v, want %q", c.classes, c.perClass, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var wantX []float32
		seen := map[int]int{}
		for i, l := range s.Labels {
			if l < c.classes && (c.perClass == 0 || seen[l] < c.perClass) {
				seen[l]++
				wantX = append(wantX, s.X[i])
			}
		}
		gotX := slices.Clone(task.X)
		slices.Sort(gotX)
		if !slices.Equal(gotX, wantX) || len(task.Classes) != c.classes {
			t.Errorf("%d classes, %d per class: samples %v classes %v, want %v", c.classes, c.perClass, gotX, task.Classes, wantX)
		}
	}
}

func TestHebbianSettingsCheck(t *testing.T) {
	ok := HebbianSettings{Classes: 10, TrainPerClass: 500, Passes: 1000, Every: 10}
	for _, c := range []struct {
		edit func(*HebbianSettings)
		err  string
	}{
		{func(*HebbianSettings) {}, ""},
		{func(s *HebbianSettings) { s.TrainPerClass = 0 }, ""},
		{func(s *HebbianSettings) { s.Classes = 1 }, "--classes 1"},
		{func(s *HebbianSettings) { s.Passes = 0 }, "--passes 0"},
		{func(s *HebbianSettings) { s.Every = 0 }, "--every 0"},
		{func(s *HebbianSettings) { s.TrainPerClass = -2 }, "--train-per-class -2"},
		{func(s *HebbianSettings) { s.Classes, s.Passes = 0, 0 }, "--classes 0"},
	} {
		s := ok
		c.edit(&s)
		if err := s.Check(); (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", s, err, c.err)
		}
	}
}
