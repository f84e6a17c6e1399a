package analysis

import (
	"fmt"

	"github.com/flycl/flycl/format/features"
)

// SelectTask is FirstClasses as flycl-lab heatmap and hebbian take it from a
// user: at least 2 classes, no more than the set desc has, and perClass
// ≥ 0 (0: all). Errors name the setting (--classes) and quote the value.
func SelectTask(s *features.Set, desc string, classes, perClass int) (*Task, error) {
	if classes < 2 {
		return nil, fmt.Errorf("--classes %d: need at least 2", classes)
	}
	if n := len(s.Classes()); n < classes {
		return nil, fmt.Errorf("--classes %d: %s has only %d classes", classes, desc, n)
	}
	if perClass < 0 {
		return nil, fmt.Errorf("--train-per-class %d: must be at least 1 (or 0 for all)", perClass)
	}
	return FirstClasses(s, classes, perClass)
}

// HebbianSettings are flycl-lab hebbian's settings: the task (Classes,
// TrainPerClass as SelectTask takes them), the passes of the Hebbian rule
// and how often its curve is recorded.
type HebbianSettings struct {
	Classes, TrainPerClass int
	Passes, Every          int
}

// Check checks the settings that need no data.
func (s HebbianSettings) Check() error {
	switch {
	case s.Classes < 2:
		return fmt.Errorf("--classes %d: need at least 2", s.Classes)
	case s.Passes < 1:
		return fmt.Errorf("--passes %d: need at least 1", s.Passes)
	case s.Every < 1:
		return fmt.Errorf("--every %d: need at least 1", s.Every)
	case s.TrainPerClass < 0:
		return fmt.Errorf("--train-per-class %d: must be >= 0 (0: all)", s.TrainPerClass)
	}
	return nil
}
