package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func classesCmd() *cobra.Command {
	var model string
	c := &cobra.Command{
		Use:   "classes --model FILE",
		Short: "List a model file's classes with their labels and sample counts",
		RunE: func(cmd *cobra.Command, args []string) error {
			if model == "" {
				return fmt.Errorf("give --model FILE")
			}
			f, err := loadFile(model)
			if err != nil {
				return err
			}
			p := f.Snapshot.Predictor()
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "name\tlabel\tsamples")
			counts := p.ClassCounts()
			for i, l := range p.Classes() {
				n := "?"
				if counts[i] >= 0 {
					n = fmt.Sprint(counts[i])
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\n", p.ClassNames()[i], l, n)
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVar(&model, "model", "", "model file")
	return c
}
