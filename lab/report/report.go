package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/metrics"
)

// Summary is one method's results over all seeds.
// Accuracies are in %. A value that cannot be computed (no test samples)
// is NaN, written as null in JSON and n/a in tables.
type Summary struct {
	Method     string         `json:"method"`
	Seeds      int            `json:"seeds"`
	Last       metrics.Stat   `json:"last"`        // A_T, mean of per-task accuracies (reference definition)
	Average    metrics.Stat   `json:"average"`     // Ā
	LastPooled metrics.Stat   `json:"last_pooled"` // A_T pooled over test samples
	AvgPooled  metrics.Stat   `json:"avg_pooled"`
	BWT        metrics.Stat   `json:"bwt"`
	Forgetting metrics.Stat   `json:"forgetting"`
	TauPost    metrics.Stat   `json:"tau_post"`  // seconds per task, mean over tasks then over seeds
	TauTrain   metrics.Stat   `json:"tau_train"` // NaN when extraction time is unknown
	PeakMB     metrics.Stat   `json:"peak_mb"`
	Curve      []metrics.Stat `json:"curve"` // A_t per task
}

// Summarize groups the runs by method.
func Summarize(r *experiment.Result) []Summary {
	var out []Summary
	for _, name := range r.Methods {
		s := Summary{Method: name}
		var last, avg, lastP, avgP, bwt, fgt, tp, tt, mem []float64
		var curves [][]float64
		for _, run := range r.Runs {
			if run.Method != name {
				continue
			}
			m := run.Matrix
			last = append(last, 100*m.Last(false))
			avg = append(avg, 100*m.Average(false))
			lastP = append(lastP, 100*m.Last(true))
			avgP = append(avgP, 100*m.Average(true))
			bwt = append(bwt, 100*m.BWT())
			fgt = append(fgt, 100*m.Forgetting())
			tp = append(tp, mean(run.TauPost))
			if len(run.TauTrain) > 0 {
				tt = append(tt, mean(run.TauTrain))
			}
			mem = append(mem, float64(run.PeakRSS)/1e6)
			c := m.Curve(false)
			for i := range c {
				c[i] *= 100
			}
			curves = append(curves, c)
		}
		s.Seeds = len(last)
		s.Last, s.Average = metrics.Summarize(last), metrics.Summarize(avg)
		s.LastPooled, s.AvgPooled = metrics.Summarize(lastP), metrics.Summarize(avgP)
		s.BWT, s.Forgetting = metrics.Summarize(bwt), metrics.Summarize(fgt)
		s.TauPost, s.TauTrain, s.PeakMB = metrics.Summarize(tp), metrics.Summarize(tt), metrics.Summarize(mem)
		if len(curves) > 0 {
			for t := range curves[0] {
				var v []float64
				for _, c := range curves {
					v = append(v, c[t])
				}
				s.Curve = append(s.Curve, metrics.Summarize(v))
			}
		}
		out = append(out, s)
	}
	return out
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Markdown writes the paper-style table: one row per method, mean ± std
// over seeds. Accuracies in %, A_t as the mean of per-task accuracies (the
// reference code's definition) with the pooled Ā alongside; n/a where
// there is no value.
func Markdown(w io.Writer, sums []Summary) {
	fmt.Fprintln(w, "| Method | A_T (%) | Ā (%) | Ā pooled (%) | BWT (%) | Forgetting (%) | τ_post (s/task) | τ_train (s/task) | Peak RSS (MB) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range sums {
		tt := s.TauTrain.Format(3)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Method,
			s.Last.Format(2), s.Average.Format(2), s.AvgPooled.Format(2), s.BWT.Format(2), s.Forgetting.Format(2),
			s.TauPost.Format(3), tt, s.PeakMB.Format(0))
	}
}

// WriteJSON writes v as indented JSON to path, atomically.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
}

// WriteCSV writes one row per method, seed and task.
func WriteCSV(path string, r *experiment.Result) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"method", "seed", "task", "classes", "train_samples", "acc_task", "A_t_mean", "A_t_pooled", "tau_post_s", "tau_train_s", "lambda", "accuracies_of_tasks_so_far", "stages_s"})
		for _, run := range r.Runs {
			for t := range run.Tasks {
				cls := make([]string, len(run.Tasks[t]))
				for i, c := range run.Tasks[t] {
					cls[i] = strconv.Itoa(c)
				}
				accs := make([]string, t+1)
				for i := 0; i <= t; i++ {
					accs[i] = ff(run.Matrix.Acc(t, i))
				}
				tt, lam := "", ""
				if t < len(run.TauTrain) {
					tt = ff(run.TauTrain[t])
				}
				if t < len(run.Lambdas) {
					lam = strconv.FormatFloat(run.Lambdas[t], 'g', -1, 64)
				}
				stages := ""
				if t < len(run.Stages) {
					var parts []string
					for _, st := range flycl.AllStages() {
						parts = append(parts, st.String()+"="+strconv.FormatFloat(run.Stages[t].Get(st).Seconds(), 'f', 4, 64))
					}
					stages = strings.Join(parts, " ")
				}
				cw.Write([]string{run.Method, strconv.FormatInt(run.Seed, 10), strconv.Itoa(t + 1), strings.Join(cls, " "),
					strconv.Itoa(run.TrainSizes[t]), ff(run.Matrix.Acc(t, t)), ff(run.Matrix.MeanAcc(t)), ff(run.Matrix.PooledAcc(t)),
					ff(run.TauPost[t]), tt, lam, strings.Join(accs, " "), stages})
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// ff formats a CSV number; NaN (no test samples) is "n/a".
func ff(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// Warnings writes the warnings of the runs as a Markdown list (nothing
// when there are none).
func Warnings(w io.Writer, r *experiment.Result) {
	ws := r.Warnings()
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWarnings (%d):\n\n", len(ws))
	for _, x := range ws {
		fmt.Fprintf(w, "- %s\n", x)
	}
}

// Table writes table.md's content: the Markdown table and the warnings.
func Table(w io.Writer, r *experiment.Result, sums []Summary) {
	Markdown(w, sums)
	Warnings(w, r)
}

// WriteAll writes result.json, result.csv, table.md and curves.png to dir.
func WriteAll(dir string, r *experiment.Result) ([]Summary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sums := Summarize(r)
	rr := *r
	rr.Schema = experiment.SchemaVersion
	if err := WriteJSON(filepath.Join(dir, "result.json"), struct {
		*experiment.Result
		Summary []Summary `json:"summary"`
	}{&rr, sums}); err != nil {
		return nil, err
	}
	if err := WriteCSV(filepath.Join(dir, "result.csv"), r); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "table.md"), func(w io.Writer) error { Table(w, r, sums); return nil }); err != nil {
		return nil, err
	}
	if err := Curves(filepath.Join(dir, "curves.png"), sums, CurveInfoOf(r)); err != nil {
		return nil, err
	}
	return sums, nil
}

// Compare writes one Markdown table across experiments: a row per method
// (in order of first appearance), a column per experiment, each cell
// "Ā ± std (A_T)" over that experiment's seeds, "–" where the method was
// not run. names label the columns; sums[i] are experiment i's summaries.
func Compare(w io.Writer, names []string, sums [][]Summary) error {
	if len(names) != len(sums) {
		return fmt.Errorf("report: %d names for %d experiments", len(names), len(sums))
	}
	var methods []string
	cell := make([]map[string]Summary, len(sums))
	for i, ss := range sums {
		cell[i] = map[string]Summary{}
		for _, s := range ss {
			if _, seen := cell[i][s.Method]; seen {
				return fmt.Errorf("report: experiment %s lists method %q twice", names[i], s.Method)
			}
			cell[i][s.Method] = s
			if !slices.Contains(methods, s.Method) {
				methods = append(methods, s.Method)
			}
		}
	}
	fmt.Fprintf(w, "| Method | %s |\n", strings.Join(names, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---:|", len(names)))
	for _, m := range methods {
		row := make([]string, len(names))
		for i := range names {
			s, ok := cell[i][m]
			if !ok {
				row[i] = "–"
				continue
			}
			row[i] = fmt.Sprintf("%s (%s)", s.Average.Format(2), metrics.Stat{Mean: s.Last.Mean, N: 1}.Format(2))
		}
		fmt.Fprintf(w, "| %s | %s |\n", m, strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "\nSeeds: %s.\n", seedCounts(names, sums))
	return nil
}

// seedCounts says how many seeds each experiment's first method has.
func seedCounts(names []string, sums [][]Summary) string {
	parts := make([]string, len(names))
	for i, n := range names {
		k := 0
		if len(sums[i]) > 0 {
			k = sums[i][0].Seeds
		}
		parts[i] = fmt.Sprintf("%s %d", n, k)
	}
	return strings.Join(parts, ", ")
}

// SweepRow is one value of a sensitivity sweep: the Fly-CL parameters it
// ran with and its summary.
type SweepRow struct {
	M, P, K  int
	Summary  Summary
	Warnings int // warnings of the runs (e.g. λ at a grid edge)
}

// SweepTable writes the Markdown table of a sweep of param (m, p or k):
// the swept parameter first, then the other two, Ā, A_T and τ_post.
func SweepTable(w io.Writer, param, data string, rows []SweepRow) error {
	names := []string{"m", "p", "k"}
	if !slices.Contains(names, param) {
		return fmt.Errorf("sweep table: parameter %q is not m, p or k", param)
	}
	cols := append([]string{param}, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == param })...)
	warn := false
	for _, r := range rows {
		warn = warn || r.Warnings > 0
	}
	fmt.Fprintf(w, "Sensitivity to %s on %s\n\n| %s | Ā (%%) | A_T (%%) | τ_post (s/task) |", param, data, strings.Join(cols, " | "))
	if warn {
		fmt.Fprint(w, " warnings |")
	}
	fmt.Fprintf(w, "\n|%s---:|---:|---:|", strings.Repeat("---:|", len(cols)))
	if warn {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		v := map[string]int{"m": r.M, "p": r.P, "k": r.K}
		for _, c := range cols {
			fmt.Fprintf(w, "| %d ", v[c])
		}
		fmt.Fprintf(w, "| %s | %s | %s |", r.Summary.Average.Format(2), r.Summary.Last.Format(2), r.Summary.TauPost.Format(3))
		if warn {
			fmt.Fprintf(w, " %d |", r.Warnings)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// WriteText writes s to path atomically.
func WriteText(path, s string) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
}
