package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/answer"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/reject"
)

// prediction is one row of flycl predict's output (answer.Answer).
type prediction = answer.Answer

// answerText is a prediction's answer as the table prints it: the class
// and its probability, or for "unknown" how far below the threshold it
// is and the best guess with its probability.
func answerText(p answer.Answer) string {
	prob := ""
	if p.Probability != nil {
		prob = fmt.Sprintf(" (p=%.2f)", *p.Probability)
	}
	typical := ""
	if p.MoreTypical != nil {
		switch {
		case *p.MoreTypical >= 1:
			typical = "less typical than every sample learned"
		case *p.MoreTypical > 0:
			typical = fmt.Sprintf("less typical than %s of the samples learned", pct(*p.MoreTypical))
		default:
			typical = "as typical as the samples learned"
		}
	}
	if !p.Unknown {
		if typical != "" {
			return p.Answer + prob + "; " + typical
		}
		return p.Answer + prob
	}
	s := p.Answer
	switch {
	case p.Margin != nil && typical != "":
		s += fmt.Sprintf(" (%s; score %.3g below the threshold)", typical, -*p.Margin)
	case p.Margin != nil:
		s += fmt.Sprintf(" (%.3g below the threshold)", -*p.Margin)
	}
	if len(p.Top) > 0 {
		s += "; best guess " + p.Top[0].Name + prob
	}
	return s
}

// pct is a share as a whole percentage, or with one decimal near the
// ends (99.5%).
func pct(v float64) string {
	p := 100 * v
	if p > 99 && p < 100 || p > 0 && p < 1 {
		return strconv.FormatFloat(math.Round(10*p)/10, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', -1, 64) + "%"
}

// predictOptions are flycl predict's flags.
type predictOptions struct {
	in                     inputFlags
	model, format, unknown string
	topN                   int
}

// AddFlags adds predict's flags to c.
func (o *predictOptions) AddFlags(c *cobra.Command) {
	o.in.register(c, "test")
	c.Flags().StringVar(&o.model, "model", "", "model file")
	c.Flags().IntVar(&o.topN, "top", 5, "classes to print per input")
	c.Flags().StringVar(&o.unknown, "unknown", "auto", "answer \"unknown\" below a threshold: auto (the model's calibrated one), off, or a number")
	c.Flags().StringVar(&o.format, "format", "table", "output format: table, json or csv")
}

func predictCmd() *cobra.Command {
	var o predictOptions
	c := &cobra.Command{
		Use:   "predict --model FILE (IMAGE... | --data KIND:PATH | --features F.npz)",
		Short: "Classify images or feature vectors with a model file: top-N classes with scores",
		Long: `Prints the top-N classes of every input with their scores. Images go through
the model's backbone and transform (--backbone gives another location of the same
weights: different weights are refused). With a data set or a labelled feature file
it also prints the accuracy over the samples of classes the model knows.

An input is answered "unknown" (its scores still printed) when the model's
rejection says it is none of the learned classes: --unknown auto uses the
threshold the model calibrated when it learned (see docs/UNKNOWN.md), off
never rejects, a number is a threshold on the calibrated score. The
probability is the top class's, calibrated by the model's fitted temperature.`,
		Example: `  flycl predict --model cam.flycl photo1.jpg photo2.jpg
  flycl predict --model cam.flycl --data folder:photos --split test --format csv`,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run reads the model file and the inputs, answers them (answer.Predict) and prints the answers and the accuracy.
func (o *predictOptions) run(cmd *cobra.Command, args []string) error {
	if o.model == "" {
		return fmt.Errorf("give --model FILE")
	}
	if o.topN <= 0 {
		return fmt.Errorf("--top must be positive, got %d", o.topN)
	}
	switch o.format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("--format %q: want table, json or csv", o.format)
	}
	for _, a := range args {
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			return flycl.Input(fmt.Errorf("%s is a folder, not an image: give its images (%s), or --data folder:%s for a folder of <class>/<image>",
				a, filepath.Join(a, "*.jpg"), shellQuote(a)))
		}
	}
	f, err := loadFile(o.model)
	if err != nil {
		return err
	}
	p := f.Snapshot.Predictor()
	if p.Classes().Len() == 0 {
		return fmt.Errorf("%s has no classes yet: teach it with flycl learn", o.model)
	}
	rej, err := reject.ParseRule(o.unknown, p.Rejection())
	if err != nil {
		return fmt.Errorf("--unknown: %w", err)
	}
	// every image that can be read is answered; the others are
	// listed after the answers, and the exit status is not 0
	o.in.skipBad = true
	s, err := o.in.load(cmd, f.Pipeline, true, args, false, nil)
	if err != nil {
		return err
	}
	res, err := answer.PredictInputs(cmd.Context(), p, rej, answer.Inputs{X: s.x, D: s.d, Names: s.paths, Truth: s.names, Source: s.desc}, o.topN)
	if err != nil {
		return err
	}
	// each answer's score as a share of the learned samples, from the
	// pool of leave-one-out scores the model's threshold was taken from
	if own := p.Rejection(); own.Score == rej.Score {
		if typ, ok := own.Typicality(f.Snapshot.State().CalibrationPool); ok {
			for i := range res.Answers {
				res.Answers[i].AddTypicality(rej, typ)
			}
		}
	}
	if err := writePredictions(os.Stdout, o.format, res.Answers, res.Accuracy); err != nil {
		return err
	}
	if len(s.bad) > 0 {
		return &intake.BadFilesError{Files: s.bad, Total: len(res.Answers) + len(s.bad)}
	}
	return nil
}

func writePredictions(w io.Writer, format string, preds []answer.Answer, acc *answer.Score) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Predictions []answer.Answer `json:"predictions"`
			Accuracy    *answer.Score   `json:"accuracy,omitempty"`
		}{preds, acc})
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"input", "truth", "rank", "label", "name", "score", "unknown", "probability"})
		for _, p := range preds {
			prob := ""
			if p.Probability != nil {
				prob = strconv.FormatFloat(*p.Probability, 'g', 6, 64)
			}
			for r, t := range p.Top {
				cw.Write([]string{p.Input, p.Truth, strconv.Itoa(r + 1), strconv.Itoa(t.Label), t.Name, strconv.FormatFloat(float64(t.Score), 'g', -1, 32),
					strconv.FormatBool(p.Unknown), prob})
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	default:
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		head := "input\t"
		if acc != nil {
			head += "truth\t"
		}
		fmt.Fprintln(tw, head+"answer\ttop classes (score)")
		for _, p := range preds {
			var parts []string
			for _, t := range p.Top {
				parts = append(parts, fmt.Sprintf("%s (%.4f)", t.Name, t.Score))
			}
			row := p.Input + "\t"
			if acc != nil {
				row += p.Truth + "\t"
			}
			row += answerText(p)
			fmt.Fprintln(tw, row+"\t"+strings.Join(parts, ", "))
		}
		tw.Flush()
	}
	if acc != nil && format != "json" {
		fmt.Fprintf(os.Stderr, "accuracy %.2f%% (%d/%d samples of known classes", 100*acc.Accuracy, acc.Correct, acc.Evaluated)
		if acc.Rejected > 0 {
			fmt.Fprintf(os.Stderr, "; %d of them answered unknown", acc.Rejected)
		}
		if acc.Unknown > 0 {
			fmt.Fprintf(os.Stderr, "; %d samples of classes the model does not know were not counted, %d of them answered unknown", acc.Unknown, acc.UnknownRejected)
		}
		fmt.Fprintln(os.Stderr, ")")
	}
	return nil
}
