package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// classesOptions are flycl classes's flags.
type classesOptions struct {
	model string
}

// AddFlags adds classes's flags to c.
func (o *classesOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.model, "model", "", "model file")
}

func classesCmd() *cobra.Command {
	var o classesOptions
	c := &cobra.Command{
		Use:   "classes --model FILE",
		Short: "List a model file's classes with their labels and sample counts",
		Args:  cobra.NoArgs,
		RunE:  o.run,
	}
	o.AddFlags(c)
	return c
}

// run reads the model file and prints its classes.
func (o *classesOptions) run(cmd *cobra.Command, args []string) error {
	if o.model == "" {
		return fmt.Errorf("give --model FILE")
	}
	f, err := loadFile(o.model)
	if err != nil {
		return err
	}
	p := f.Snapshot.Predictor()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tlabel\tsamples")
	classes := p.Classes()
	counts, names := classes.Counts(), classes.Names()
	for i, l := range classes.Labels() {
		n := "?"
		if counts[i] >= 0 {
			n = fmt.Sprint(counts[i])
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", names[i], l, n)
	}
	return tw.Flush()
}
