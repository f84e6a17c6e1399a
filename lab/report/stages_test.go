package report

import (
	"testing"

	"github.com/flycl/flycl"
)

// TestStageLabels: every learning stage has a table label of its own (a
// stage added to flycl without one would fall back to its file name),
// and the labels are distinct, so no two columns of a table share one.
func TestStageLabels(t *testing.T) {
	seen := map[string]flycl.Stage{}
	for _, st := range flycl.AllStages() {
		l, ok := stageLabels[st]
		if !ok || l == "" {
			t.Errorf("stage %v has no table label", st)
		}
		if o, dup := seen[l]; dup {
			t.Errorf("stages %v and %v share the label %q", o, st, l)
		}
		seen[l] = st
		if StageLabel(st) != l {
			t.Errorf("StageLabel(%v) = %q, want %q", st, StageLabel(st), l)
		}
	}
	if len(stageLabels) != len(flycl.AllStages()) {
		t.Errorf("%d labels for %d stages", len(stageLabels), len(flycl.AllStages()))
	}
	if got := StageLabel(flycl.Stage(99)); got != flycl.Stage(99).String() {
		t.Errorf("unknown stage: %q", got)
	}
}
