package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/openset"
	"github.com/flycl/flycl/reject"
)

// benchUnknownCmd is "flycl-lab bench unknown": the open-set benchmark of
// package openset on feature files.
func benchUnknownCmd() *cobra.Command {
	var cfg openset.Config
	mf := cli.SomeModelFlags(flycl.DefaultConfig(), "M", "P", "K", "Lambdas")
	var sets []string
	var seeds []uint
	var trainPer, testPer int
	var score string
	c := &cobra.Command{
		Use:   "unknown --features NAME=DIR [--features NAME=DIR ...]",
		Short: "Compare scores that tell learned classes from unknown ones, on real features",
		Long: `Learns some classes of a feature data set and treats the test images of the
others as unknown, over several class orders and seeds of W, and prints one
table: per score (the model's top score, margin, energy; Mahalanobis
distance, cosine to the nearest class mean and k-th nearest neighbour in
feature space; ViM; the cosines on log1p features and on the model's codes,
and their fusions with the top score) AUROC, FPR at 95% TPR and known-class
accuracy at that threshold, and, for the scores calibrated by leave-one-out
(the model's own, the cosines to the class means and their fusions), what
that threshold keeps and rejects. A second table gives the
calibration error (ECE) of the probabilities before and after the fitted
temperature. Protocols: "split" learns --known classes in one task;
"incremental" learns all classes in --tasks tasks and evaluates after each
but the last, the classes of later tasks being unknown.

Each DIR holds train.npz and test.npz as "flycl extract --out DIR" writes them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(sets) == 0 {
				return fmt.Errorf("--features: give at least one NAME=DIR")
			}
			var err error
			if cfg.Model, err = mf.Config(); err != nil {
				return err
			}
			in, err := openset.LoadSets(sets, trainPer, testPer)
			if err != nil {
				return err
			}
			for _, s := range seeds {
				cfg.Seeds = append(cfg.Seeds, uint64(s))
			}
			k, err := reject.ParseScore(score)
			if err != nil {
				return fmt.Errorf("--score: %w", err)
			}
			cfg.Calibration.Score = k
			if !(cfg.Calibration.Keep > 0 && cfg.Calibration.Keep <= 1) {
				return fmt.Errorf("--keep %g: want a share in (0, 1]", cfg.Calibration.Keep)
			}
			res, err := openset.Run(cmd.Context(), in, cfg, func(s string) { fmt.Fprintln(os.Stderr, s) })
			if err != nil {
				return err
			}
			res.Markdown(os.Stdout)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringArrayVar(&sets, "features", nil, "NAME=DIR: a backbone's feature files DIR/train.npz and DIR/test.npz (repeatable)")
	fs.IntVar(&trainPer, "train-per-class", 0, "use the first N training samples of each class (0: all)")
	fs.IntVar(&testPer, "test-per-class", 0, "use the first N test samples of each class (0: all)")
	fs.IntVar(&cfg.Known, "known", 0, "classes learned in the split protocol (default: half)")
	fs.IntVar(&cfg.Tasks, "tasks", 5, "tasks of the incremental protocol")
	fs.IntVar(&cfg.Splits, "splits", 3, "random class orders")
	fs.UintSliceVar(&seeds, "seeds", []uint{1993, 1994}, "seeds of W")
	fs.StringSliceVar(&cfg.Protocols, "protocols", []string{"split", "incremental"}, "protocols: split, incremental")
	fs.Float64Var(&cfg.Calibration.Keep, "keep", reject.DefaultKeep, "share of known samples the calibrated threshold keeps")
	fs.IntVar(&cfg.Calibration.MaxSamples, "calib-samples", reject.DefaultCalibrationSamples, "leave-one-out samples per learn")
	fs.StringVar(&score, "score", string(reject.ScoreTopCosine), "the score the model calibrates its stored threshold for: top+cosine (the model's default; its row is \"top + cosine NCM (codes)\"), top, margin or energy")
	fs.IntVar(&cfg.KNN, "knn", 10, "k of the k-th nearest neighbour score")
	fs.Float64Var(&cfg.Shrink, "shrink", 0.1, "shrinkage of the Mahalanobis covariance towards its mean variance")
	mf.Register(fs) // --m --p --k --lambdas
	return c
}

// benchFewShotCmd is "flycl-lab bench fewshot": the few-shot "unknown" and
// calibration benchmark of package openset on feature files.
func benchFewShotCmd() *cobra.Command {
	var cfg openset.FewShotConfig
	// a smaller m than the paper's, for speed, with the relative grid
	def := flycl.Config{M: 2000, P: 300, LambdaScale: flycl.LambdaRelative}
	def.K = flycl.KForM(def.M)
	mf := cli.SomeModelFlags(def, "M", "P", "K", "Lambdas", "LambdaScale", "WidenGrid", "Dual")
	var sets []string
	var groupsFile string
	var scores []string
	var seed uint
	c := &cobra.Command{
		Use:   "fewshot --features NAME=DIR [--features NAME=DIR ...]",
		Short: "How \"unknown\" and the probabilities of a model learned from a few photos per class hold up",
		Long: `Broad classes made of ImageNet classes (WordNet groups of a 500-photo
ImageNet sample: dog, bird, reptile, arthropod, wheeled vehicle, clothing,
food, musical instrument), --shots photos per class learned in one learn by
a new model that calibrates its rejection as a deployed model does, over
--splits random draws. The other photos of those classes are the known test
photos; the photos of the other ImageNet classes and those of a second data
set (CIFAR-10) are unknown. Per shot count, asked keep share and score: the
share of known photos kept (mean and 10th percentile over splits, each
class weighted alike), the share of each kind of unknown photo rejected,
the accuracy of the kept answers and the AUROC; then the calibration error
(ECE, 15 bins) of the probabilities.

Each DIR holds train.npz (the ImageNet photos, one class per wnid) and
test.npz (the other data set's photos) as "flycl extract --out DIR" writes
them from a folder DIR/train/<wnid>/<photo>, DIR/test/<class>/<photo>
(docs/UNKNOWN.md shows the commands). --groups replaces the built-in
grouping (lines wnid<TAB>group).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(sets) == 0 {
				return fmt.Errorf("--features: give at least one NAME=DIR")
			}
			groups, err := openset.LoadGroups(groupsFile)
			if err != nil {
				return err
			}
			if cfg.Model, err = mf.Config(); err != nil {
				return err
			}
			for _, s := range scores {
				k, err := reject.ParseScore(s)
				if err != nil {
					return fmt.Errorf("--scores: %w", err)
				}
				cfg.Scores = append(cfg.Scores, k)
			}
			for _, k := range cfg.Keeps {
				if !(k > 0 && k <= 1) {
					return fmt.Errorf("--keeps %g: want shares in (0, 1]", k)
				}
			}
			cfg.Seed = uint64(seed)
			in, err := openset.LoadFewShotSets(sets, groups)
			if err != nil {
				return err
			}
			res, err := openset.FewShot(cmd.Context(), in, cfg, func(s string) { fmt.Fprintln(os.Stderr, s) })
			if err != nil {
				return err
			}
			res.Markdown(os.Stdout)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringArrayVar(&sets, "features", nil, "NAME=DIR: a backbone's features of the ImageNet photos (DIR/train.npz) and of the other data set (DIR/test.npz) (repeatable)")
	fs.StringVar(&groupsFile, "groups", "", "file of lines wnid<TAB>group (default: the built-in WordNet grouping, scripts/imagenet-groups)")
	fs.IntSliceVar(&cfg.Shots, "shots", []int{3, 5, 10}, "photos per class learned")
	fs.IntVar(&cfg.Splits, "splits", 20, "random draws per shot count")
	fs.Float64SliceVar(&cfg.Keeps, "keeps", []float64{0.90, 0.95}, "shares of known photos the thresholds are asked to keep")
	fs.StringSliceVar(&scores, "scores", []string{"top+cosine", "top", "margin", "energy"}, "open-set scores compared")
	fs.UintVar(&seed, "seed", 1, "seed of the draws (W's seed is it plus the split)")
	fs.BoolVar(&cfg.Compare, "compare", false, "add, side by side, a threshold taken from the extrapolated leave-one-out values, and a temperature fitted on the exact ones (the rule before)")
	mf.Register(fs) // --m --p --k --lambdas --lambda-scale
	return c
}
