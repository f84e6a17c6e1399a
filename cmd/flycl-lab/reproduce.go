package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/fetch"
)

// reproduceOptions are flycl-lab reproduce's flags.
type reproduceOptions struct {
	ff                  fetchFlags
	weightsDir, dataDir string
	dryRun, list        bool
}

// AddFlags adds reproduce's flags to c.
func (o *reproduceOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.weightsDir, "weights-dir", defaultWeightsDir, "folder of the backbone weights")
	c.Flags().StringVar(&o.dataDir, "data-dir", defaultDataDir, "folder of the data sets")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "print what would be downloaded and run, and the expected time; do nothing")
	c.Flags().BoolVar(&o.list, "list", false, "list the settings")
	o.ff.register(c)
}

func reproduceCmd() *cobra.Command {
	var o reproduceOptions
	c := &cobra.Command{
		Use:   "reproduce SETTING [--dry-run]",
		Short: "Fetch what one of the paper's settings needs and run its command (docs/REPRODUCE.md)",
		Long: `Fetches the backbone and data set of a setting of the paper (see "flycl-lab
reproduce --list" or docs/REPRODUCE.md), verified as "flycl-lab fetch" does, then
runs the setting's flycl-lab run command. --dry-run prints what would be downloaded
(names, sizes), the command, and the time it took on the machine the docs
measured, without doing anything.`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run plans the setting (fetch.PlanSetting) and prints the plan, or fetches its assets and runs its flycl-lab run command.
func (o *reproduceOptions) run(cmd *cobra.Command, args []string) error {
	out := cmd.OutOrStdout()
	if o.list || len(args) == 0 {
		return printSettings(out, o.weightsDir, o.dataDir)
	}
	s, err := fetch.LookupSetting(args[0])
	if err != nil {
		return err
	}
	plan, err := fetch.PlanSetting(s, o.weightsDir, o.dataDir)
	if err != nil {
		return err
	}
	if o.dryRun {
		return printPlan(out, plan)
	}
	cl, err := o.ff.client(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	for _, a := range plan.Assets {
		res, err := cl.Fetch(cmd.Context(), a.Asset, a.Dir)
		if err != nil {
			return err
		}
		printResult(out, res, a.Dir)
	}
	line := plan.Command
	fmt.Fprintf(out, "running: flycl-lab %s\n", strings.Join(line, " "))
	run := runCmd() // the very command "flycl-lab run" is, on its own
	run.SilenceUsage, run.SilenceErrors = true, true
	run.SetArgs(line[1:])
	run.SetOut(cmd.OutOrStdout())
	run.SetErr(cmd.ErrOrStderr())
	return run.ExecuteContext(cmd.Context())
}

// printSettings lists every setting with its command.
func printSettings(w io.Writer, weightsDir, dataDir string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\twhat\tpaper (Fly-CL)")
	for _, s := range fetch.Settings() {
		p := s.Paper
		if p == "" {
			p = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Title, p)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nflycl-lab reproduce SETTING --dry-run shows what it downloads and runs.")
	return err
}

// printPlan is the dry run: downloads, command, expected time.
func printPlan(w io.Writer, p *fetch.Plan) error {
	s := p.Setting
	fmt.Fprintf(w, "%s: %s\n\nwould fetch:\n", s.Name, s.Title)
	for _, a := range p.Assets {
		state := "to download"
		if a.Present {
			state = "there (verified before the run)"
		} else if a.Partial > 0 {
			state = fmt.Sprintf("to download, resuming after %s", fetch.HumanBytes(a.Partial))
		}
		dg := a.Digest.Algo + " published"
		if a.TrustOnFirstUse() {
			dg = "no published digest: trust on first use"
		}
		fmt.Fprintf(w, "  %-12s %-58s %10s  %s; %s\n", a.Name, filepath.Join(a.Dir, a.File), a.SizeText(), dg, state)
		if a.Split != "" {
			fmt.Fprintf(w, "  %-12s converted into %s/ (train/<class>/, test/<class>/)\n", "", a.Path(a.Dir))
		}
	}
	fmt.Fprintf(w, "\nwould run:\n  flycl-lab %s\n\n", strings.Join(p.Command, " "))
	m, e := fetch.DocsMeasured, p.Estimate
	fmt.Fprintf(w, "expected time, from the docs' measurements (%s; %s):\n", m.Machine, m.Commands)
	if e.Extract > 0 {
		fmt.Fprintf(w, "  feature extraction: %d images at %.1f images/s: %s (once; then cached)\n", e.Images, m.ImagesPerSecond[s.Backbone], fmtDuration(e.Extract))
	} else {
		fmt.Fprintf(w, "  feature extraction: not estimated (the image count is known once the split is fetched)\n")
	}
	if e.Post > 0 {
		fmt.Fprintf(w, "  Fly-CL learning: %d tasks × %d seeds at %v per task: %s\n", s.Tasks, s.Seeds, m.PostPerTask[s.Data+"/"+s.Backbone], fmtDuration(e.Post))
	} else {
		fmt.Fprintf(w, "  Fly-CL learning: not measured for this data set and backbone\n")
	}
	fmt.Fprintf(w, "  not included: the other methods of --methods all, and the downloads\n")
	if s.Paper != "" {
		fmt.Fprintf(w, "\nthe paper reports %s for Fly-CL\n", s.Paper)
	}
	return nil
}

func fmtDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	if d < time.Minute {
		return "under a minute"
	}
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h == 0 {
		return fmt.Sprintf("about %d min", m)
	}
	return fmt.Sprintf("about %d h %02d min", h, m)
}
