package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/store"
)

// repairOptions are flycl repair's flags.
type repairOptions struct {
	model string
	wait  waitFlag
}

// AddFlags adds repair's flags to c.
func (o *repairOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.model, "model", "", "model file")
	o.wait.register(c)
}

func repairCmd() *cobra.Command {
	var o repairOptions
	c := &cobra.Command{
		Use:   "repair --model FILE",
		Short: "Make a model's journal readable again: keep its valid records, after a backup, and list what is dropped",
		Long: `The way out when a model does not load because of its journal (FILE.journal):

- a journal damaged before its end (a record that does not read, with whole
  records after it): the records before the damage are kept, the rest dropped;
- a journal that does not belong to the model file (another model's, or the
  model file was replaced, e.g. by a copy or a restore from backup): the
  journal is moved aside and the model file used as it is.

The journal as it was is kept beside it first (FILE.journal.broken-TIME), and
every record dropped is listed (version, change, samples, classes, bytes): the
changes they made are no longer in the model. A torn tail (a write a crash cut
short, never acknowledged) needs no repair: it is ignored, and cut off by the
next change. Repair takes the model file's lock, like any writer.`,
		Example: `  flycl repair --model cam.flycl`,
		Args:    cobra.NoArgs,
		RunE:    o.run,
	}
	o.AddFlags(c)
	return c
}

// run repairs the model file's journal (store.Repair) and prints what it kept and dropped.
func (o *repairOptions) run(cmd *cobra.Command, args []string) error {
	if o.model == "" {
		return fmt.Errorf("give --model FILE")
	}
	so, err := storeOptions(o.wait, args)
	if err != nil {
		return err
	}
	rep, m, err := store.Repair(cmd.Context(), o.model, so)
	if rep == nil {
		return err
	}
	out := cmd.OutOrStdout()
	switch rep.Action {
	case "none":
		fmt.Fprintf(out, "%s: nothing to repair (%s)\n", o.model, rep.Reason)
	default:
		fmt.Fprintf(out, "%s: %s\n", rep.Journal, rep.Reason)
		fmt.Fprintf(out, "kept a copy of the journal as it was: %s\n", rep.Backup)
		if rep.Action == "cut" {
			fmt.Fprintf(out, "kept the first %d bytes (%d changes since the checkpoint); dropped %d bytes\n", rep.KeptBytes, rep.Kept, rep.DroppedBytes)
		} else {
			fmt.Fprintf(out, "moved the journal aside (%d bytes): the model file is used as it is\n", rep.DroppedBytes)
		}
		for _, d := range rep.Dropped {
			op := d.Op
			if op == "" {
				op = "a record that does not decode"
			}
			fmt.Fprintf(out, "dropped: version %d, %s of %d samples (%s), %d bytes at byte %d\n", d.Version, op, d.Rows, strings.Join(d.Names, ", "), d.Bytes, d.Offset)
		}
		if len(rep.Dropped) == 0 {
			fmt.Fprintf(out, "dropped no whole record\n")
		}
	}
	if err != nil {
		return err
	}
	warnLoad(m)
	fmt.Fprintf(out, "model %s loads: version %d, %d classes\n", o.model, m.Model.Version(), m.Model.Classes().Len())
	return nil
}
