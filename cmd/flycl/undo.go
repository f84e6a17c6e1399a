package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
)

// undoOptions are flycl undo's flags.
type undoOptions struct {
	model   string
	to      uint64
	version uint64
	wait    waitFlag
}

// AddFlags adds undo's flags to c.
func (o *undoOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.model, "model", "", "model file")
	c.Flags().Uint64Var(&o.to, "to", 0, "undo every learn after this version, so that the model ends as it was then (0: as created; default: the last learn only)")
	c.Flags().Uint64Var(&o.version, "version", 0, "undo only if the learn of this version is the last one (else nothing is undone: exit status 2)")
	o.wait.register(c)
}

func undoCmd() *cobra.Command {
	var o undoOptions
	c := &cobra.Command{
		Use:   "undo --model FILE [--to VERSION] [--version LEARN]",
		Short: "Take the last learn (or every learn after VERSION) back out of a model exactly",
		Long: `Takes the last learn back out of the model, exactly: its samples, which the
model's journal holds (FILE.journal; flycl serve and flycl learn keep one,
unless learn's --no-journal), are subtracted from G and S, the classes it added go, and
the classifier is re-solved with the λ the model had before it. The model then
equals the one before that learn (G up to float32 rounding) as a new version:
versions only grow. With --to VERSION every learn after that version not
undone yet is undone, newest first, so that the model ends as it was at
VERSION (--to 0: as created, before its first learn, when the journal holds
that learn); when it already is, nothing is done. VERSION must be one the
journal records; an undo cannot reach past a forget, nor redo a learn an
earlier undo took back, nor reach past the history the journal keeps:
"flycl history" shows what it can undo. With --version LEARN the undo is done
only if the learn of version LEARN is the one it takes back (the last learn
not undone), else nothing is undone and flycl exits with status 2: a script
that undoes the learn it made never takes back another's. Each learn taken
back is printed (its version, samples and classes), then the version the
model ends at.`,
		Example: `  flycl undo --model cam.flycl
  flycl history --model cam.flycl && flycl undo --model cam.flycl --to 3`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run opens the model file's store, takes learns back out (store.Undo) and prints each.
func (o *undoOptions) run(cmd *cobra.Command, args []string) error {
	if o.model == "" {
		return fmt.Errorf("give --model FILE")
	}
	st, err := openStore(cmd, o.model, o.wait, args, false)
	if err != nil {
		return err
	}
	defer st.Close()
	if !st.Exists() {
		return fmt.Errorf("%s does not exist", o.model)
	}
	var target *uint64
	if cmd.Flags().Changed("to") {
		target = &o.to
	}
	u := store.Undo{To: target}
	if cmd.Flags().Changed("version") {
		u.Version = &o.version
	}
	done, err := st.UndoIf(cmd.Context(), u, nil)
	for _, e := range done {
		fmt.Printf("undid the learn of version %d (%d samples of %s) with lambda %g: model %s at version %d\n",
			e.Undoes, e.Rows(), strings.Join(deploy.Distinct(e.Names), ", "), e.LambdaBefore, o.model, e.Version)
	}
	if err != nil {
		if len(done) == 0 {
			return fmt.Errorf("undo (%s unchanged): %w", o.model, err)
		}
		return fmt.Errorf("undo: %w", err)
	}
	return st.View(func(m *deploy.Model) error {
		switch {
		case target == nil:
			fmt.Printf("model %s: version %d, %d classes\n", o.model, m.Model.Version(), m.Model.Classes().Len())
		case len(done) == 0:
			fmt.Printf("nothing to undo: %s (version %d) is as it was at version %d\n", o.model, m.Model.Version(), o.to)
		default:
			fmt.Printf("%s is as it was at version %d: version %d, %d classes\n", o.model, o.to, m.Model.Version(), m.Model.Classes().Len())
		}
		return nil
	})
}

// historyOptions are flycl history's flags.
type historyOptions struct {
	model string
}

// AddFlags adds history's flags to c.
func (o *historyOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.model, "model", "", "model file")
}

func historyCmd() *cobra.Command {
	var o historyOptions
	c := &cobra.Command{
		Use:   "history --model FILE",
		Short: "List a model's changes that its journal records (what flycl undo can take back)",
		Args:  cobra.NoArgs,
		RunE:  o.run,
	}
	o.AddFlags(c)
	return c
}

// run reads the journal's history (store.History) and prints it.
func (o *historyOptions) run(cmd *cobra.Command, _ []string) error {
	if o.model == "" {
		return fmt.Errorf("give --model FILE")
	}
	h, err := store.History(o.model)
	if err != nil {
		return err
	}
	if len(h) == 0 {
		if _, err := os.Stat(o.model); err != nil {
			// no model and no journal: a mistyped path is not "no journal"
			return notLearnedYet(o.model, err)
		}
		fmt.Printf("%s has no journal of its changes (flycl learn starts one at the next learn unless --no-journal, flycl serve keeps one; flycl info shows the learning steps)\n", o.model)
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "version\ttime\tchange\tsamples\tclasses\tlambda before\tundoable")
	for _, i := range h {
		op := i.Op
		if i.Undoes != 0 {
			op = fmt.Sprintf("undo of %d", i.Undoes)
		}
		u := ""
		if i.Undoable {
			u = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%g\t%s\n", i.Version, i.Time.Format("2006-01-02 15:04:05"), op, i.Samples, strings.Join(i.Classes, ","), i.LambdaBefore, u)
	}
	return tw.Flush()
}
