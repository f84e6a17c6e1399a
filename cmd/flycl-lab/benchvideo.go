package main

import (
	"fmt"
	"github.com/flycl/flycl/cmd/internal/cli"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/openset"
	"github.com/flycl/flycl/reject"
)

// benchVideoFramesCmd is "flycl-lab bench video-frames": the video
// benchmark's frames, made from still photos (openset.WriteVideoFrames).
func benchVideoFramesCmd() *cobra.Command {
	var cfg openset.VideoFramesConfig
	var out string
	var seed uint
	c := &cobra.Command{
		Use:   "video-frames --photos DIR --out DIR",
		Short: "Make the video benchmark's frames (object tracks and empty scenes) from still photos",
		Long: `Writes, for every photo of --photos (the ImageNet sample, one photo per class,
<wnid>_<name>.JPEG) but the scenes, --frames frames of one object track in
each view: cropped as a detector crops it ("crop"), and pasted into each
--scenes photo as a camera's zone sees it; and --empty frames of each empty
scene. Each frame is another crop of the photo in another light. The folder
is one set for "flycl extract --data folder:DIR" (docs/WATCH.md shows the
commands).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Photos == "" || out == "" {
				return fmt.Errorf("give --photos and --out")
			}
			cfg.Seed = uint64(seed)
			n, err := openset.WriteVideoFrames(cmd.Context(), cfg, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%d frames in %s\n", n, out)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&cfg.Photos, "photos", "", "folder of photos <wnid>_<name>.JPEG")
	fs.StringVar(&out, "out", "", "folder the frames are written to")
	fs.StringSliceVar(&cfg.Scenes, "scenes", openset.DefaultVideoScenes, "photos of --photos that are cameras' empty scenes")
	fs.IntVar(&cfg.Frames, "frames", 5, "frames of each object's track")
	fs.IntVar(&cfg.Empty, "empty", 40, "frames of each empty scene")
	fs.UintVar(&seed, "seed", 1, "seed of the augmentations")
	return c
}

// benchVideoCmd is "flycl-lab bench video": answers across frames
// (openset.Video) on the features of "flycl-lab bench video-frames"' frames.
func benchVideoCmd() *cobra.Command {
	var cfg openset.VideoConfig
	// the model flycl learn gives a new photo model (deploy.DefaultImageConfig
	// for the features' d, through configflag's NewConfig): each flag
	// given replaces its field; the defaults shown are d = 768's
	mf := cli.SomeModelFlags(deploy.DefaultImageConfig(768), "M", "P", "K", "Lambdas", "LambdaScale", "WidenGrid", "Dual")
	var sets []string
	var groupsFile string
	var seed uint
	c := &cobra.Command{
		Use:   "video --features NAME=DIR [--features NAME=DIR ...]",
		Short: "Strangers labelled as a known class per frame and per object, on tracks of frames made from photos",
		Long: `On the frames of "flycl-lab bench video-frames" (each photo an object seen in
several frames, as a detector's crop and in cameras' scenes), a new model
learns --shots photos of each broad class (the WordNet groups of "flycl bench
fewshot") from one frame each (the model flycl learn creates for photos:
m = 10000, k = 3000, p scaled to the features' d (the default shown is
d = 768's), the dual form; the model flags replace what they name), alone,
with the scene's empty frames as the reserved background class, and with
--none photos of untaught classes as "none of these". Every other photo's
track is then decided per frame and per object by four rules: the first
frame alone, flycl's Frigate vote (3 tries, 60%), a zone's debounce (3
frames), and the track rule (--quorum of --tries frames kept and agreeing,
its per-frame threshold calibrated so that known objects are kept with
share --keep). Per rule it prints the shares of the strangers' frames and
objects labelled as a known class, of the known objects' frames and objects
kept, and of the empty scenes' frames labelled. A second table checks the
target (a rule, at any per-frame keep, keeping at least 90% of the known
objects and labelling at most half as many strangers' objects as one frame
labels of their frames) and gives the ROC points of the open-set values per
frame and per object.

DIR holds train.npz as "flycl extract --data folder:FRAMES --out DIR" writes
it (docs/WATCH.md shows the commands).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(sets) == 0 {
				return fmt.Errorf("--features: give at least one NAME=DIR")
			}
			groups, err := openset.LoadGroups(groupsFile)
			if err != nil {
				return err
			}
			if !(cfg.Keep > 0 && cfg.Keep <= 1) {
				return fmt.Errorf("--keep %g: want a share in (0, 1]", cfg.Keep)
			}
			cfg.Seed = uint64(seed)
			var res *openset.VideoResult
			for _, s := range sets {
				name, dir, err := openset.ParseSetSpec(s)
				if err != nil {
					return err
				}
				f, err := features.Load(filepath.Join(dir, features.TrainFile))
				if err != nil {
					return err
				}
				// each backbone's own d sizes its model, as flycl learn's
				c := cfg
				if c.Model, err = mf.Bound().NewConfig(f.D, true); err != nil {
					return err
				}
				if err := mf.Validate(c.Model, f.D); err != nil {
					return fmt.Errorf("--features %s: %w", s, err)
				}
				fmt.Fprintf(os.Stderr, "%s: m = %d, k = %d, p = %d, dual form up to %d samples\n", name, c.Model.M, c.Model.K, c.Model.P, c.Model.Dual)
				r, err := openset.Video(cmd.Context(), []openset.VideoSet{{Name: name, Frames: f, Groups: groups}}, c, func(s string) { fmt.Fprintln(os.Stderr, s) })
				if err != nil {
					return err
				}
				if res == nil {
					res = r
				} else {
					res.Rows = append(res.Rows, r.Rows...)
				}
			}
			res.Markdown(os.Stdout)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringArrayVar(&sets, "features", nil, "NAME=DIR: a backbone's features of the frames (DIR/train.npz) (repeatable)")
	fs.StringVar(&groupsFile, "groups", "", "file of lines wnid<TAB>group (default: the built-in WordNet grouping)")
	fs.IntVar(&cfg.Shots, "shots", 5, "photos per class learned")
	fs.IntVar(&cfg.Splits, "splits", 10, "random draws")
	fs.Float64Var(&cfg.Keep, "keep", reject.DefaultKeep, "share of known objects the rules are asked to keep")
	fs.IntVar(&cfg.Tries, "tries", reject.DefaultTrack.Tries, "frames an object is decided on")
	fs.IntVar(&cfg.Quorum, "quorum", reject.DefaultTrack.Quorum, "frames that must be kept and agree")
	fs.IntVar(&cfg.Background, "background", 20, "empty frames of the scene learned as background")
	fs.BoolVar(&cfg.ExcludeReserved, "exclude-reserved", false, "take the thresholds from the learned classes' leave-one-out values alone (default: the model's own pool, the reserved classes' samples included, as a deployed model's)")
	fs.BoolVar(&cfg.SubtractScene, "subtract-scene", false, "in a scene view, subtract the mean of the --background empty frames from every frame (learned and scored)")
	fs.IntVar(&cfg.None, "none", 10, "photos of untaught classes given as \"none of these\"")
	fs.UintVar(&seed, "seed", 1, "seed of the draws (W's seed is it plus the split)")
	mf.Register(fs)
	return c
}
