package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/server"
)

// benchServeLearnCmd measures what one learn costs the server: the wall
// time and the peak resident memory of server.FileBackend.Learn (learn,
// save, publish) on a model of the given m, next to the memory the model
// itself holds.
func benchServeLearnCmd() *cobra.Command {
	var m, d, n, classes, learns int
	var dir string
	c := &cobra.Command{
		Use:   "serve-learn [--m 10000] [--d 512] [--n 200] [--learns 3]",
		Short: "Peak memory and time of one learn of flycl serve's model file backend (learn + save + publish)",
		Long: `Creates a model file (in --dir, a temporary folder by default) with the server's
file backend and teaches it --learns tasks of --n synthetic feature vectors
(--classes new classes each), one after another, as POST /v1/learn does.
Before each learn it returns freed memory to the system and resets the
kernel's peak-RSS counter, then prints the learn's wall time (learn and
save), the resident memory before it, the peak during it, and the peak
less the memory before, next to G's size (m×m float32): the extra memory a
learn needs on top of the model it changes, and the peak as a multiple of
G (the copy per learn it replaced made it about 3.3). A last row reopens the file (a
restart, or the undo of a failed learn) with no model in memory before.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, f := range []struct {
				name string
				v    int
			}{{"m", m}, {"d", d}, {"n", n}, {"classes", classes}, {"learns", learns}} {
				if f.v < 1 {
					return fmt.Errorf("--%s %d: must be at least 1", f.name, f.v)
				}
			}
			if classes > n {
				return fmt.Errorf("--classes %d: more than the --n %d samples", classes, n)
			}
			if dir == "" {
				t, err := os.MkdirTemp("", "flycl-bench-learn-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(t)
				dir = t
			}
			cfg := flycl.DefaultConfig()
			cfg.M, cfg.P, cfg.K = m, min(cfg.P, d), min(cfg.K, m)
			path := filepath.Join(dir, "bench.flycl")
			os.Remove(path)
			be, err := server.OpenFile(path, func() (*flycl.Model, error) { return flycl.New(cfg, d) })
			if err != nil {
				return err
			}
			if !procmem.ResetPeak() {
				fmt.Fprintln(os.Stderr, "warning: cannot reset the peak-RSS counter (/proc/self/clear_refs): peaks are since start")
			}
			gMiB := float64(m) * float64(m) * 4 / (1 << 20)
			fmt.Printf("serve-learn: m=%d d=%d, %d samples × %d new classes per learn; G (m×m float32) = %.0f MiB; GOMAXPROCS=%d\n",
				m, d, n, classes, gMiB, runtime.GOMAXPROCS(0))
			fmt.Printf("%-6s %8s %8s %8s %12s %12s %12s %8s\n", "learn", "version", "learn_s", "save_s", "rss_MiB", "peak_MiB", "extra_MiB", "peak/G")
			r := rand.New(rand.NewPCG(1, 2))
			for l := 0; l < learns; l++ {
				// classes are Gaussian clusters around random centres
				centres := make([]float32, classes*d)
				for i := range centres {
					centres[i] = float32(r.NormFloat64())
				}
				x := make([]float32, n*d)
				names := make([]string, n)
				for i := 0; i < n; i++ {
					c := i % classes
					names[i] = fmt.Sprintf("c%d-%d", l, c)
					for j := 0; j < d; j++ {
						x[i*d+j] = centres[c*d+j] + 0.5*float32(r.NormFloat64())
					}
				}
				runtime.GC()
				debug.FreeOSMemory()
				procmem.ResetPeak()
				before := procmem.Current()
				t := time.Now()
				rep, sn, err := be.Learn(cmd.Context(), x, names, server.LearnOptions{})
				if err != nil {
					return err
				}
				wall := time.Since(t)
				peak := procmem.Peak()
				save := rep.Stages["save"]
				fmt.Printf("%-6d %8d %8.2f %8.2f %12.0f %12.0f %12.0f %8.2f\n", l+1, sn.Version(), (wall - save).Seconds(), save.Seconds(),
					float64(before)/(1<<20), float64(peak)/(1<<20), float64(peak-before)/(1<<20), float64(peak)/(1<<20)/gMiB)
			}
			// what a restart (or the undo of a failed learn) costs: the
			// file read back into a new backend, the old one gone
			be.Close()
			be = nil
			runtime.GC()
			debug.FreeOSMemory()
			procmem.ResetPeak()
			before := procmem.Current()
			t := time.Now()
			be, err = server.OpenFile(path, nil)
			if err != nil {
				return err
			}
			peak := procmem.Peak()
			fmt.Printf("%-6s %8d %8.2f %8s %12.0f %12.0f %12.0f %8.2f\n", "reopen", be.Current().Version(), time.Since(t).Seconds(), "-",
				float64(before)/(1<<20), float64(peak)/(1<<20), float64(peak-before)/(1<<20), float64(peak)/(1<<20)/gMiB)
			return nil
		},
	}
	fs := c.Flags()
	fs.IntVar(&m, "m", 10000, "expansion dimension")
	fs.IntVar(&d, "d", 512, "feature dimension")
	fs.IntVar(&n, "n", 200, "samples per learn")
	fs.IntVar(&classes, "classes", 2, "new classes per learn")
	fs.IntVar(&learns, "learns", 3, "learns, one after another")
	fs.StringVar(&dir, "dir", "", "folder for the model file (default: a temporary one, removed afterwards)")
	return c
}
