package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/lab/openset"
)

// benchRecipeCmd is "flycl-lab bench frigate-recipe": flycl and Frigate's
// custom-classification recipe side by side on the few-shot benchmark.
func benchRecipeCmd() *cobra.Command {
	var cfg openset.RecipeConfig
	var set, groupsFile, python, script string
	var seed uint
	var backboneMS float64
	c := &cobra.Command{
		Use:   "frigate-recipe --features NAME=DIR",
		Short: "flycl against Frigate's custom-classification recipe on the same photos and features",
		Long: `Runs flycl and the recipe of Frigate 0.17's custom classification side by side
on the splits of "flycl-lab bench fewshot" (the same seed draws the same photos):
flycl learns each split's photos in one learn with the defaults of a new
photo model (those of flycl learn) and answers with its calibrated "unknown";
the recipe's head (Dense(128, relu), Dropout(0.3), Dense(classes, softmax) on
the backbone's pooled features; Adam 0.001, batch 16, 50 epochs, 80/20 split,
Keras's default initialisation) trains on the same photos plus a "none" class
of other ImageNet photos, in PyTorch (--head-script, run by --python), and
answers when its top class is not none with probability ≥ --threshold. Then a
class-incremental sequence of each split: 3 classes, then a 4th and a 5th
(flycl learns each; the recipe trains again). Prints the answers, the unknown
photos rejected at the same kept share, times and memory.

DIR holds train.npz and test.npz as for flycl-lab bench fewshot. With
--backbone-ms (the backbone's time per photo, decoding included) the time
of the recipe as Frigate runs it (the backbone in every epoch) is estimated
as that × training photos × 50 epochs + the head's training.
scripts/bench-frigate-recipe prepares everything and runs it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if set == "" {
				return fmt.Errorf("--features: give NAME=DIR")
			}
			if backboneMS < 0 {
				return fmt.Errorf("--backbone-ms %g: want a time ≥ 0", backboneMS)
			}
			groups, err := openset.LoadGroups(groupsFile)
			if err != nil {
				return err
			}
			in, err := openset.LoadFewShotSets([]string{set}, groups)
			if err != nil {
				return err
			}
			if _, err := os.Stat(script); err != nil {
				return fmt.Errorf("--head-script: %w", err)
			}
			cfg.Model = deploy.DefaultImageConfig(in[0].Photos.D) // what flycl learn gives a new photo model
			cfg.Seed = uint64(seed)
			cfg.BackboneSeconds = backboneMS / 1000
			head := openset.PythonHead{Python: python, Script: script, Stderr: os.Stderr}
			res, err := openset.Recipe(cmd.Context(), in[0], cfg, head, func(s string) { fmt.Fprintln(os.Stderr, s) })
			if err != nil {
				return err
			}
			res.Markdown(cmd.OutOrStdout())
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&set, "features", "", "NAME=DIR: the backbone's features of the ImageNet photos (DIR/train.npz) and of the other data set (DIR/test.npz)")
	fs.StringVar(&groupsFile, "groups", "", "file of lines wnid<TAB>group (default: the built-in WordNet grouping)")
	fs.IntSliceVar(&cfg.Shots, "shots", []int{3, 5, 10}, "photos per class learned")
	fs.IntVar(&cfg.Splits, "splits", 20, "random draws per shot count")
	fs.UintVar(&seed, "seed", 1, "seed of the draws (flycl-lab bench fewshot's)")
	fs.IntVar(&cfg.None, "none", 0, "photos in the recipe's none class (0: as many as a class)")
	fs.Float64Var(&cfg.Threshold, "threshold", 0.8, "the recipe's softmax threshold (Frigate's default)")
	fs.Float64Var(&backboneMS, "backbone-ms", 0, "the backbone's time per photo in ms, decoding included, for the estimate with the backbone in every epoch (0: none)")
	fs.StringVar(&python, "python", "python3", "Python interpreter with numpy and torch")
	fs.StringVar(&script, "head-script", "python/bench/frigate_head.py", "the recipe's head")
	return c
}
