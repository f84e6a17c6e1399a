package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/export"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// exportFlags are the options of flycl export.
type exportFlags struct {
	model, out, precision, from, form, backbone string
}

func (f *exportFlags) addFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.model, "model", "", "model file")
	fs.StringVar(&f.out, "out", "", "ONNX file to write")
	fs.StringVar(&f.from, "from", "", "graph input: images (through the model's backbone) or features (default: images when the model has a backbone)")
	fs.StringVar(&f.precision, "precision", "", "the backbone precision expected: fp32 or int8 (default: the model's; another is refused)")
	fs.StringVar(&f.form, "w", "dense", "how the graph stores W: dense (d×m, fastest) or sparse (m×p columns and values, smaller)")
	fs.StringVar(&f.backbone, "backbone", "", "another location of the model's backbone weights (default: the one its file records)")
	fs.String("ort-lib", "", "path to libonnxruntime.so, for a backbone from an .onnx file (default $"+cli.EnvORTLib+"; see flycl help environment)")
}

func exportCmd() *cobra.Command {
	var f exportFlags
	c := &cobra.Command{
		Use:   "export --model FILE --out M.onnx",
		Short: "Write a learned model as one ONNX graph (image or features in, class scores out) for any ONNX Runtime",
		Long: `Writes the model as one ONNX graph: a preprocessed image batch (N×3×S×S, the
model's transform applied) through the model's backbone, or with --from features a
batch of feature vectors (N×d), then W, top-k and the classifier, to the outputs
"scores" (N×classes) and "class" (N, the column of the best score); a graph from
images also outputs the backbone's features, and a model that answers "unknown"
its open-set score, the decision and the top class's probability. The class names
are in the model's metadata (flycl.classes). docs/EXPORT.md shows how to run it from Python,
JavaScript and C#.

The backbone is the model's own, in the precision it learned with: an int8 model
exports its int8 graph (the same calibration); --precision only states what you
expect, and a precision other than the model's is refused, since its features
would not be the ones the classifier learned from.`,
		Example: `  flycl export --model cam.flycl --out cam.onnx
  flycl export --model cam.flycl --out cam-features.onnx --from features`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runExport(cmd, &f) },
	}
	f.addFlags(c)
	return c
}

// runExport builds the graph of the model file (export.BuildFile) and
// writes it.
func runExport(cmd *cobra.Command, f *exportFlags) error {
	if f.model == "" || f.out == "" {
		return fmt.Errorf("give --model FILE and --out M.onnx")
	}
	proj, err := export.ParseProjection(f.form)
	if err != nil {
		return fmt.Errorf("--w: %w", err)
	}
	mf, err := loadFile(f.model)
	if err != nil {
		return err
	}
	g, err := export.BuildFile(cmd.Context(), mf, export.FileOptions{Name: f.model, From: f.from, Precision: f.precision, Backbone: f.backbone, Projection: proj,
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
			if s.Name == "onnx" {
				// a user's .onnx file: its inputs and outputs are read by ONNX Runtime
				lib, err := cli.ORTLibrary(cmd.Flags())
				if err != nil {
					return nil, err
				}
				if err := backbone.Init(lib); err != nil {
					return nil, err
				}
			}
			bm, err := cli.OpenBackboneSpec(s)
			if err != nil {
				return nil, fmt.Errorf("%w (see \"flycl help environment\" for %s; --backbone gives another location of the same weights)", err, cli.EnvModels)
			}
			return bm, nil
		}})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(f.out, func(w io.Writer) error { _, err := w.Write(g.ONNX); return err }); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%.1f MB, opset %d, W %s): input %s; outputs %s; %d classes in metadata %s\n",
		f.out, float64(len(g.ONNX))/1e6, g.Opset, proj, describe(g.Input), describeAll(g.Outputs), len(g.Classes), export.MetaClasses)
	return nil
}

func describe(v export.Value) string {
	dims := make([]string, len(v.Shape))
	for i, d := range v.Shape {
		dims[i] = fmt.Sprint(d)
		if d < 0 {
			dims[i] = "N"
		}
	}
	return fmt.Sprintf("%s %s %s", v.Name, strings.Join(dims, "×"), v.Type)
}

func describeAll(vs []export.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = describe(v)
	}
	return strings.Join(parts, ", ")
}
