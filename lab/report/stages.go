package report

import "github.com/flycl/flycl"

// stageLabels are the learning stages' names in table headers; files and
// JSON name them by flycl.Stage.String ("topk", "gram").
var stageLabels = map[flycl.Stage]string{
	flycl.StageProjection: "projection",
	flycl.StageTopK:       "top-k",
	flycl.StageGram:       "G update",
	flycl.StageGCV:        "GCV",
	flycl.StageFactor:     "factor",
	flycl.StageSolve:      "solve",
}

// StageLabel returns the name of a learning stage for a table header
// ("top-k", "G update"); a stage without one is named by its String.
func StageLabel(s flycl.Stage) string {
	if l, ok := stageLabels[s]; ok {
		return l
	}
	return s.String()
}
