package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/bench"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/imageio"
)

// benchDecodeBudgetCmd measures the server's memory and a small predict's
// latency under a burst of large images, with and without the decoding
// budget, side by side, one process per budget.
// decodeBudgetOptions are flycl-lab bench decode-budget's flags.
type decodeBudgetOptions struct {
	spec        string
	side, large int
	budgets     []int64
	one         bool
}

// AddFlags adds bench decode-budget's flags to c.
func (o *decodeBudgetOptions) AddFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&o.spec, "backbone", "squeezenet", "backbone")
	fs.IntVar(&o.side, "side", 6300, "width and height of the large all-zero PNG")
	fs.IntVar(&o.large, "large", 8, "large predicts sent at once")
	fs.Int64SliceVar(&o.budgets, "budgets", []int64{-1, imageio.DefaultBudgetPixels}, "decoding budgets to compare, in pixels (-1: none)")
	fs.BoolVar(&o.one, "one", false, "measure the one --budgets value in this process and print the result as JSON")
	fs.MarkHidden("one")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+cli.EnvORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
}

func benchDecodeBudgetCmd() *cobra.Command {
	var o decodeBudgetOptions
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
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run measures one budget in this process (--one, bench.DecodeBudget), or each budget in a child process, and prints the table.
func (o *decodeBudgetOptions) run(cmd *cobra.Command, _ []string) error {
	lib, err := cli.ORTLibrary(cmd.Flags())
	if err != nil {
		return err
	}
	if o.one {
		if len(o.budgets) != 1 {
			return fmt.Errorf("--one: give one --budgets value, not %d", len(o.budgets))
		}
		if err := backbone.Init(lib); err != nil {
			return err
		}
		bb, err := cli.OpenBackbone(o.spec)
		if err != nil {
			return err
		}
		r, err := bench.DecodeBudget(cmd.Context(), bench.DecodeBudgetOptions{Backbone: bb, Spec: o.spec, Side: o.side, Large: o.large, Budget: o.budgets[0]})
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
	for _, b := range o.budgets {
		var out bytes.Buffer
		child := exec.CommandContext(cmd.Context(), self, "bench", "decode-budget", "--one", "--ort-lib", lib, "--backbone", o.spec,
			"--side", strconv.Itoa(o.side), "--large", strconv.Itoa(o.large), "--budgets", strconv.FormatInt(b, 10))
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
	bench.PrintDecodeBudget(os.Stdout, o.spec, o.side, o.large, rs)
	return nil
}
