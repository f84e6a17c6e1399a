// Package report turns experiment results into the paper's artefacts: a
// complete JSON record, a CSV of every task of every run, a Markdown table
// laid out like the paper's tables, and PNG figures (accuracy curves,
// prototype-correlation heat maps, sensitivity sweeps).
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flycl/flycl/experiment"
	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/metrics"
)

// Summary is one method's results over all seeds.
type Summary struct {
	Method     string
	Seeds      int
	Last       metrics.Stat // A_T, mean of per-task accuracies (reference definition)
	Average    metrics.Stat // Ā
	LastPooled metrics.Stat // A_T pooled over test samples
	AvgPooled  metrics.Stat
	BWT        metrics.Stat
	Forgetting metrics.Stat
	TauPost    metrics.Stat // seconds per task, mean over tasks then over seeds
	TauTrain   metrics.Stat // NaN when extraction time is unknown
	PeakMB     metrics.Stat
	Curve      []metrics.Stat // A_t per task
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
// reference code's definition) with the pooled Ā alongside.
func Markdown(w io.Writer, sums []Summary) {
	fmt.Fprintln(w, "| Method | A_T (%) | Ā (%) | Ā pooled (%) | BWT (%) | Forgetting (%) | τ_post (s/task) | τ_train (s/task) | Peak RSS (MB) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range sums {
		tt := "n/a"
		if s.TauTrain.N > 0 {
			tt = s.TauTrain.Format(3)
		}
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
	return writeFile(path, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
}

func writeFile(path string, fill func(io.Writer) error) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// WriteCSV writes one row per method, seed and task.
func WriteCSV(path string, r *experiment.Result) error {
	return writeFile(path, func(w io.Writer) error {
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
					for _, k := range []string{"projection", "topk", "gram", "gcv", "factor", "solve"} {
						if v, ok := run.Stages[t][k]; ok {
							parts = append(parts, k+"="+strconv.FormatFloat(v, 'f', 4, 64))
						}
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

func ff(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// WriteAll writes result.json, result.csv, table.md and curves.png to dir.
func WriteAll(dir string, r *experiment.Result) ([]Summary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sums := Summarize(r)
	if err := WriteJSON(filepath.Join(dir, "result.json"), struct {
		*experiment.Result
		Summary []Summary
	}{r, sums}); err != nil {
		return nil, err
	}
	if err := WriteCSV(filepath.Join(dir, "result.csv"), r); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "table.md"), func(w io.Writer) error { Markdown(w, sums); return nil }); err != nil {
		return nil, err
	}
	if err := Curves(filepath.Join(dir, "curves.png"), sums); err != nil {
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
			row[i] = fmt.Sprintf("%s (%.2f)", s.Average.Format(2), s.Last.Mean)
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
