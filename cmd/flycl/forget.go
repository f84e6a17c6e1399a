package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/store"
)

func forgetCmd() *cobra.Command {
	var in inputFlags
	var model, class string
	var wait waitFlag
	c := &cobra.Command{
		Use:   "forget --model FILE --class NAME [--data KIND:PATH | --features F.npz]",
		Short: "Remove a class from a model file: exactly with its data, or only its column without",
		Long: `With the class's training data (the same data set or feature file it was taught
with; only the samples of that class are used), its statistics are subtracted
from G and S and the classifier re-solved: the model then equals one that never saw
the class (up to float32 rounding in G). The data is checked against what the class
learned (its sample count and its row of S).

Without data only the class's column is dropped: the other classes' scores are
unchanged, but G still holds the class's samples.`,
		Example: `  flycl forget --model cam.flycl --class forklift --data folder:photos
  flycl forget --model cam.flycl --class forklift`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if model == "" || class == "" {
				return fmt.Errorf("give --model FILE and --class NAME")
			}
			st, err := openStore(cmd, model, wait, args, false)
			if err != nil {
				return err
			}
			defer st.Close()
			var data func(*deploy.Model) (*store.ForgetData, error)
			if in.data != "" || in.features != "" || len(args) > 0 {
				data = func(m *deploy.Model) (*store.ForgetData, error) {
					s, err := in.load(cmd, m.Pipeline, true, nil, true)
					if err != nil {
						return nil, err
					}
					return &store.ForgetData{X: s.x, D: s.d, Names: s.names, Source: s.desc}, nil
				}
			}
			res, err := st.Forget(cmd.Context(), class, data)
			if err = warnNotRecorded(err); err != nil {
				return err
			}
			if res.Exact {
				fmt.Printf("forgot %q exactly: subtracted its %d samples (from %s) from G and S and re-solved with lambda %g (%.3fs)\n",
					class, res.Record.Samples, res.Source, res.Record.Lambda, res.Record.Stages.Total().Seconds())
			} else {
				held := "its samples"
				if res.Held >= 0 {
					held = fmt.Sprintf("its %d samples", res.Held)
				}
				fmt.Printf("dropped %q: its column is gone, but G still holds %s (give --data or --features with its training data to remove it exactly)\n", class, held)
			}
			m := st.Model()
			fmt.Printf("model %s: version %d, %d classes\n", model, m.Version(), len(m.Classes()))
			return nil
		},
	}
	in.register(c, "train")
	c.Flags().StringVar(&model, "model", "", "model file")
	c.Flags().StringVar(&class, "class", "", "name of the class to forget")
	wait.register(c)
	return c
}
