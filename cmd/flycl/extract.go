package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// extractOptions are flycl extract's flags.
type extractOptions struct {
	e    cli.ExtractFlags
	data cli.DataFlags
	out  string
}

// AddFlags adds extract's flags to c.
func (o *extractOptions) AddFlags(c *cobra.Command) {
	o.e.Register(c)
	c.Flags().StringVar(&o.data.Data, "data", "", "data set as kind:path")
	c.Flags().StringVar(&o.out, "out", "out/features", "output directory")
	c.Flags().BoolVar(&o.e.Quiet, "quiet", false, "print nothing but errors")
}

func extractCmd() *cobra.Command {
	var o extractOptions
	c := &cobra.Command{
		Use:   "extract",
		Short: "Extract backbone features of a data set into train.npz and test.npz",
		Long: `Decodes and preprocesses every image of both splits exactly as PIL/torchvision
would, runs the backbone on ONNX Runtime, and writes --out/train.npz and
--out/test.npz (a folder without train/ and test/ sub-folders, DIR/<class>/<image>,
is one set of images and gives train.npz alone) (features, labels, paths, class_names, extract_seconds, and
pipeline: the backbone's identity as a model file records it: spec, weights
SHA-256, output, transform, precision and int8 calibration, which flycl
learn, predict and stats --features check against the model's).
Results are cached under --cache keyed by weights, transform, data and split,
so a second run is instant; an interrupted run resumes from its last chunk.

Data sets (--data): ` + strings.Join(dataset.Kinds, ", ") + ` as kind:path.`,
		Example: `  flycl extract --data folder:../shared/data/cifar10-jpeg.tar.gz --backbone mobilenetv2 --out out/c10-mnv2
  flycl extract --data cifar100:cifar-100-python.tar.gz --backbone vit:vit_base_patch16_224.safetensors --preset flycl-cifar`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run extracts every split the data set has (intake.ExtractSplits) into
// its feature file.
func (o *extractOptions) run(cmd *cobra.Command, args []string) error {
	if o.data.Data == "" {
		return fmt.Errorf("give --data")
	}
	if o.e.Backbone == "" {
		o.e.Backbone = extract.DefaultBackbone
	}
	spec, err := o.data.Spec()
	if err != nil {
		return err
	}
	if err := cli.CheckOut(o.out); err != nil {
		return err
	}
	splits := intake.ExtractSplits(spec)
	for _, sp := range splits {
		s, err := o.e.Features(cmd, spec, sp.Split, o.e.Quiet)
		if err != nil {
			return err
		}
		if err := features.Save(filepath.Join(o.out, sp.File), s); err != nil {
			return err
		}
		if len(splits) == 1 && !o.e.Quiet {
			fmt.Fprintf(os.Stderr, "wrote %s/train.npz: %s has no train/ or test/ sub-folder, so its %d images (DIR/<class>/<image>) are one set and there is no test.npz\n", o.out, spec.Path, s.N)
			return nil
		}
	}
	if !o.e.Quiet {
		fmt.Fprintf(os.Stderr, "wrote %s/{train,test}.npz\n", o.out)
	}
	return nil
}
