package report

import (
	"fmt"
	"path/filepath"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl/lab/analysis"
)

// WriteHeatmap writes the prototype correlations of the three stages of
// Fly-CL to dir/heatmap.png (one panel per stage, titled with its mean
// |r| off the diagonal, class labels on the axes, caption underneath) and
// dir/heatmap.json.
func WriteHeatmap(dir string, st *analysis.Stages, caption string) error {
	titles := []string{
		fmt.Sprintf("features (mean |r| %.2f)", st.MeanAbsOD[0]),
		fmt.Sprintf("projection+top-k (%.2f)", st.MeanAbsOD[1]),
		fmt.Sprintf("ridge outputs (%.2f)", st.MeanAbsOD[2]),
	}
	labels := make([]string, len(st.Classes))
	for i, c := range st.Classes {
		labels[i] = strconv.Itoa(c)
	}
	info := HeatmapInfo{Caption: caption, Labels: labels}
	if err := Heatmaps(filepath.Join(dir, "heatmap.png"), titles, []*mat.Dense{st.Features, st.Codes, st.Ridge}, info); err != nil {
		return err
	}
	return WriteJSON(filepath.Join(dir, "heatmap.json"), st)
}
