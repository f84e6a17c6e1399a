package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/ridge"
	"github.com/flycl/flycl/vision/imageio"
)

// printModelInfo describes a model file: format, version, configuration,
// pipeline, classes and the λ history.
func printModelInfo(w io.Writer, path string) error {
	f, err := loadFile(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	s := f.Snapshot
	st := s.State()
	c := st.Config
	fmt.Fprintf(w, "model file    %s (%s, format %d)\n", path, size(fi.Size()), f.Format)
	fmt.Fprintf(w, "version       %d\n", st.Version)
	if !f.Created.IsZero() {
		fmt.Fprintf(w, "created       %s\n", f.Created.Format("2006-01-02 15:04:05 UTC"))
	}
	fmt.Fprintf(w, "saved         %s\n", f.Saved.Format("2006-01-02 15:04:05 UTC"))
	wdesc := fmt.Sprintf("seed %d", c.Seed)
	if s.Projection().Seed == nil {
		wdesc = "explicit"
	}
	fmt.Fprintf(w, "config        d=%d m=%d p=%d k=%d, W %s, top-k %s, GCV %s, projection %s\n", st.InputDim, c.M, c.P, c.K, wdesc, c.TopK, c.GCV, c.Projection)
	fmt.Fprintf(w, "lambda grid   %v\n", c.Lambdas)
	if p := f.Pipeline; p != nil {
		t := p.Transform
		fmt.Fprintf(w, "backbone      %s (%s, output %s, d=%d, weights sha256 %.16s…)\n", p.Backbone, p.Name, p.Output, p.Dim, p.WeightsHash)
		fmt.Fprintf(w, "transform     %s: resize %d %s, crop %d, mean %v, std %v\n", t.Preset, t.Resize, t.Filter, t.Crop, t.Mean, t.Std)
	} else {
		fmt.Fprintf(w, "backbone      none (learns from feature vectors)\n")
	}
	fmt.Fprintf(w, "samples       %d\n", s.Samples())
	form, why := st.Form()
	fmt.Fprintf(w, "form          %s: %s\n", form, why)
	fmt.Fprintf(w, "classes       %d: %s\n", len(st.Labels), strings.Join(s.Predictor().Classes().Names(), ", "))
	lim := ""
	if st.Dual != nil && c.WidenGrid {
		lim = " (GCV minimised over every λ > 0)"
		switch ridge.Limit(st.LambdaLimit) {
		case ridge.LimitInterpolating:
			lim = fmt.Sprintf(" (the interpolating limit: GCV still falls at %g × the mean eigenvalue of HHᵀ, the floor of its search)", 1/ridge.ContinuousRange)
		case ridge.LimitConstant:
			lim = fmt.Sprintf(" (the constant limit: GCV still falls at %g × the mean eigenvalue of HHᵀ, the ceiling of its search)", ridge.ContinuousRange)
		}
	}
	fmt.Fprintf(w, "lambda        %g%s\n", st.Lambda, lim)
	fmt.Fprintf(w, "unknown       %s\n", strings.TrimPrefix(st.Rejection.String(), "unknown "))
	if typ, ok := st.Rejection.Typicality(st.CalibrationPool); ok && st.Rejection.Keep > 0 {
		fmt.Fprintf(w, "  in words    a photo is unknown when it is %s\n", typ.Words(typ.AtLeast(st.Rejection.Threshold), "samples"))
	}
	fmt.Fprintf(w, "history       %d steps\n", len(st.History))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  step\tkind\tsamples\tclasses\tlambda\tchosen by\tseconds")
	for i, r := range st.History {
		kind, cls, by := "learn", fmt.Sprint(r.NewClasses), "GCV"
		if r.GCV == nil {
			by = "fixed"
		}
		if r.Removed != nil {
			kind, cls, by = "forget", fmt.Sprint(r.Removed), "kept"
			if r.Samples == 0 {
				kind = "drop"
			}
		}
		if r.RaisedFrom != 0 {
			by += fmt.Sprintf(", raised from %g", r.RaisedFrom)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%s\t%g\t%s\t%.3f\n", i+1, kind, r.Samples, cls, r.Lambda, by, r.Stages.Total().Seconds())
	}
	return tw.Flush()
}

// infoOptions are flycl info's flags.
type infoOptions struct {
	model string
}

// AddFlags adds info's flags to c.
func (o *infoOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.model, "model", "", "model file to describe (config, version, classes, lambda history, size)")
}

func infoCmd() *cobra.Command {
	var o infoOptions
	c := &cobra.Command{
		Use:   "info [FILE | --model FILE]",
		Short: "Print the build's linear-algebra backend and threads, or a model file's configuration and history",
		Args:  cobra.MaximumNArgs(1),
		RunE:  o.run,
	}
	o.AddFlags(c)
	return c
}

// run describes a model file, or else the build.
func (o *infoOptions) run(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		if o.model != "" && o.model != args[0] {
			return fmt.Errorf("info: two model files given (%s and --model %s): give one", args[0], o.model)
		}
		o.model = args[0]
	}
	if o.model != "" {
		return printModelInfo(os.Stdout, o.model)
	}
	fmt.Printf("linalg backend: %s, %d threads; GOMAXPROCS %d; %s/%s\n",
		linalg.Backend(), linalg.Threads(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("JPEG decoder: %s\n", imageio.JPEGDecoder)
	for _, v := range []string{"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OPENBLAS_L2_SIZE"} {
		if s, ok := os.LookupEnv(v); ok {
			fmt.Printf("%s=%s\n", v, s)
		}
	}
	return nil
}
