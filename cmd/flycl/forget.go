package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
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
			m := st.Model()
			if m == nil {
				return fmt.Errorf("%s does not exist", model)
			}
			counts := m.ClassCounts()
			label, ok := m.LabelOf(class)
			if !ok {
				return fmt.Errorf("%w: %s has no class %q (classes: %v)", flycl.ErrUnknownClass, model, class, m.ClassNames())
			}
			n := -1
			for i, l := range m.Classes() {
				if l == label {
					n = counts[i]
				}
			}
			var x []float32
			var src string
			if in.data != "" || in.features != "" || len(args) > 0 {
				s, err := in.load(cmd, m.Pipeline, true, nil, true)
				if err != nil {
					return err
				}
				if s.d != m.InputDim() {
					return fmt.Errorf("the data has %d-dimensional features, the model d=%d", s.d, m.InputDim())
				}
				if x = deploy.Select(s.x, s.d, s.names, class); x == nil {
					return fmt.Errorf("%s has no samples of class %q", s.desc, class)
				}
				src = s.desc
			} else if xs := st.JournalSamples(class); xs != nil {
				// the journal holds every sample the class learned: the
				// forget is exact without the data
				x, src = xs, "the model's journal"
			}
			var rec flycl.TaskRecord
			var exact bool
			err = update(cmd, st, func(m *deploy.Model) (store.Change, error) {
				var err error
				if rec, exact, err = m.Forget(cmd.Context(), class, x, nil); err != nil {
					return store.Change{}, fmt.Errorf("forget (%s unchanged): %w", model, err)
				}
				return store.Change{Entry: deploy.ForgetEntry(m.Version(), class, x, m.InputDim())}, nil
			})
			if err != nil {
				return err
			}
			m = st.Model()
			if exact {
				fmt.Printf("forgot %q exactly: subtracted its %d samples (from %s) from G and S and re-solved with lambda %g (%.3fs)\n",
					class, rec.Samples, src, rec.Lambda, rec.Stages.Total().Seconds())
			} else {
				held := "its samples"
				if n >= 0 {
					held = fmt.Sprintf("its %d samples", n)
				}
				fmt.Printf("dropped %q: its column is gone, but G still holds %s (give --data or --features with its training data to remove it exactly)\n", class, held)
			}
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

var _ = os.Stdout
