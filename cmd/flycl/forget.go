package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
)

// forgetOptions are flycl forget's flags.
type forgetOptions struct {
	in           inputFlags
	model, class string
	wait         waitFlag
}

// AddFlags adds forget's flags to c.
func (o *forgetOptions) AddFlags(c *cobra.Command) {
	o.in.register(c, "train")
	c.Flags().StringVar(&o.model, "model", "", "model file")
	c.Flags().StringVar(&o.class, "class", "", "name of the class to forget")
	o.wait.register(c)
}

func forgetCmd() *cobra.Command {
	var o forgetOptions
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
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run opens the model file's store, forgets the class there (store.Forget:
// the store decides whether the forget is exact) and prints what it did.
func (o *forgetOptions) run(cmd *cobra.Command, args []string) error {
	if o.model == "" || o.class == "" {
		return fmt.Errorf("give --model FILE and --class NAME")
	}
	st, err := openStore(cmd, o.model, o.wait, args, false)
	if err != nil {
		return err
	}
	defer st.Close()
	var data func(*deploy.Model) (*store.ForgetData, error)
	if o.in.data != "" || o.in.features != "" || len(args) > 0 {
		data = func(m *deploy.Model) (*store.ForgetData, error) {
			s, err := o.in.load(cmd, m.Pipeline, true, nil, true, nil)
			if err != nil {
				return nil, err
			}
			return &store.ForgetData{X: s.x, D: s.d, Names: s.names, Source: s.desc}, nil
		}
	}
	res, err := st.Forget(cmd.Context(), o.class, data)
	if err = warnNotRecorded(err); err != nil {
		return err
	}
	if res.Exact {
		fmt.Printf("forgot %q exactly: subtracted its %d samples (from %s) from G and S and re-solved with lambda %g (%.3fs)\n",
			o.class, res.Record.Samples, res.Source, res.Record.Lambda, res.Record.Stages.Total().Seconds())
	} else {
		held := "its samples"
		if res.Held >= 0 {
			held = fmt.Sprintf("its %d samples", res.Held)
		}
		fmt.Printf("dropped %q: its column is gone, but G still holds %s (give --data or --features with its training data to remove it exactly)\n", o.class, held)
	}
	return st.View(func(m *deploy.Model) error {
		fmt.Printf("model %s: version %d, %d classes\n", o.model, m.Model.Version(), m.Model.Classes().Len())
		return nil
	})
}
