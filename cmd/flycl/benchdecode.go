package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/internal/bench"
)

// benchDecodeBudgetCmd measures the server's memory and a small predict's
// latency under a burst of large images, with and without the decoding
// budget, side by side, one process per budget.
func benchDecodeBudgetCmd() *cobra.Command {
	var spec string
	var side, large int
	var budgets []int64
	var one bool
	c := &cobra.Command{
		Use:   "decode-budget [--backbone squeezenet]",
		Short: "Peak RSS rise and a small predict's latency while many large images arrive at once, per decoding budget",
		Long: `For each --budgets value (the server's --decode-pixels; -1: none), runs a
fresh flycl process that starts the server in itself on 127.0.0.1 and sends
--large concurrent predicts of a --side × --side all-zero RGB PNG (about
130 kB that decodes to side² pixels: a decompression bomb just under the
default 40-megapixel limit), then, half a second later, one predict of a
small 224×224 PNG. It prints, per budget: the process's peak resident
memory above what it held before the burst, the small predict's latency,
how many large predicts were answered and refused (503), and the burst's
wall time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lib, err := ortLibrary(cmd.Flags())
			if err != nil {
				return err
			}
			if one {
				if len(budgets) != 1 {
					return fmt.Errorf("--one: give one --budgets value, not %d", len(budgets))
				}
				if err := backbone.Init(lib); err != nil {
					return err
				}
				bb, err := openBackbone(spec)
				if err != nil {
					return err
				}
				r, err := bench.DecodeBudget(cmd.Context(), bench.DecodeBudgetOptions{Backbone: bb, Spec: spec, Side: side, Large: large, Budget: budgets[0]})
				if err != nil {
					return err
				}
				return json.NewEncoder(os.Stdout).Encode(r)
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			var rs []bench.DecodeBudgetResult
			for _, b := range budgets {
				var out bytes.Buffer
				child := exec.CommandContext(cmd.Context(), self, "bench", "decode-budget", "--one", "--ort-lib", lib, "--backbone", spec,
					"--side", strconv.Itoa(side), "--large", strconv.Itoa(large), "--budgets", strconv.FormatInt(b, 10))
				child.Stdout, child.Stderr = &out, os.Stderr
				if err := child.Run(); err != nil {
					return fmt.Errorf("budget %d: %w", b, err)
				}
				var r bench.DecodeBudgetResult
				if err := json.Unmarshal(out.Bytes(), &r); err != nil {
					return fmt.Errorf("budget %d: %w", b, err)
				}
				rs = append(rs, r)
			}
			bench.PrintDecodeBudget(os.Stdout, spec, side, large, rs)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&spec, "backbone", "squeezenet", "backbone")
	fs.IntVar(&side, "side", 6300, "width and height of the large all-zero PNG")
	fs.IntVar(&large, "large", 8, "large predicts sent at once")
	fs.Int64SliceVar(&budgets, "budgets", []int64{-1, imageio.DefaultBudgetPixels}, "decoding budgets to compare, in pixels (-1: none)")
	fs.BoolVar(&one, "one", false, "measure the one --budgets value in this process and print the result as JSON")
	fs.MarkHidden("one")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	return c
}
