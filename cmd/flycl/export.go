package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/export"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/internal/atomicfile"
)

func exportCmd() *cobra.Command {
	var model, out, precision, from, form, spec string
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if model == "" || out == "" {
				return fmt.Errorf("give --model FILE and --out M.onnx")
			}
			proj, err := export.ParseProjection(form)
			if err != nil {
				return fmt.Errorf("--w: %w", err)
			}
			f, err := loadFile(model)
			if err != nil {
				return err
			}
			if from == "" {
				from = "features"
				if f.Pipeline != nil {
					from = "images"
				}
			}
			opt := export.Options{Projection: proj}
			switch from {
			case "features":
				if cmd.Flags().Changed("precision") || spec != "" {
					return fmt.Errorf("--precision and --backbone apply to a graph from images, not --from features")
				}
			case "images":
				if f.Pipeline == nil {
					return fmt.Errorf("%s learned from feature vectors without a backbone: export it with --from features", model)
				}
				if err := export.CheckPrecision(f.Pipeline, precision); err != nil {
					return fmt.Errorf("--precision: %w", err)
				}
				// the model's backbone (or --backbone, another copy of its weights)
				opt.Extractor, err = deploy.ResolveExtractor(cmd.Context(), deploy.ExtractorOptions{Spec: spec, Model: f.Pipeline, Trained: true,
					Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
						if s.Name == "onnx" {
							// a user's .onnx file: its inputs and outputs are read by ONNX Runtime
							lib, err := ortLibrary(cmd.Flags())
							if err != nil {
								return nil, err
							}
							if err := backbone.Init(lib); err != nil {
								return nil, err
							}
						}
						bm, err := openBackboneSpec(s)
						if err != nil {
							return nil, fmt.Errorf("%w (see \"flycl help environment\" for %s; --backbone gives another location of the same weights)", err, envModels)
						}
						return bm, nil
					}})
				if err != nil {
					return err
				}
			default:
				return fmt.Errorf("--from %q: want images or features", from)
			}
			g, err := export.Build(f.Snapshot, opt)
			if err != nil {
				return err
			}
			if err := atomicfile.WriteFile(out, func(w io.Writer) error { _, err := w.Write(g.ONNX); return err }); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "wrote %s (%.1f MB, opset %d, W %s): input %s; outputs %s; %d classes in metadata %s\n",
				out, float64(len(g.ONNX))/1e6, g.Opset, proj, describe(g.Input), describeAll(g.Outputs), len(g.Classes), export.MetaClasses)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&model, "model", "", "model file")
	fs.StringVar(&out, "out", "", "ONNX file to write")
	fs.StringVar(&from, "from", "", "graph input: images (through the model's backbone) or features (default: images when the model has a backbone)")
	fs.StringVar(&precision, "precision", "", "the backbone precision expected: fp32 or int8 (default: the model's; another is refused)")
	fs.StringVar(&form, "w", "dense", "how the graph stores W: dense (d×m, fastest) or sparse (m×p columns and values, smaller)")
	fs.StringVar(&spec, "backbone", "", "another location of the model's backbone weights (default: the one its file records)")
	fs.String("ort-lib", "", "path to libonnxruntime.so, for a backbone from an .onnx file (default $"+envORTLib+"; see flycl help environment)")
	return c
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
