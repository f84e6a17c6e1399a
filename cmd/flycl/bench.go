package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/enginebench"
	"github.com/flycl/flycl/linalg"
	"github.com/spf13/cobra"
)

func benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "Measure the engine and its parts on this machine"}
	var scale string
	var tasks, floorRuns int
	cfg := flycl.DefaultConfig()
	eng := &cobra.Command{
		Use:   "engine",
		Short: "Time every stage of learning synthetic tasks next to the BLAS floor (ssyrk + spotrf)",
		Long: `Learns a synthetic class-incremental stream at one of the paper's scales and
prints, per task, the time of every stage and tau_post divided by the BLAS
floor: a bare ssyrk of the task's codes plus a bare spotrf of the m×m matrix,
measured in the same process afterwards. Also prints the peak RSS.

Scales: cifar100 (10 tasks × 5000 samples × d=768, 10 classes per task) and
cub (10 tasks × 600 samples × d=768, 20 classes per task).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, ok := enginebench.Scales[scale]
			if !ok {
				var names []string
				for k := range enginebench.Scales {
					names = append(names, k)
				}
				sort.Strings(names)
				return fmt.Errorf("unknown scale %q (want %s)", scale, strings.Join(names, " or "))
			}
			if tasks > 0 {
				sc.Tasks = tasks
			}
			res, err := enginebench.Run(cmd.Context(), sc, cfg, floorRuns, os.Stderr)
			if err != nil {
				return err
			}
			res.Report(os.Stdout)
			return nil
		},
	}
	eng.Flags().StringVar(&scale, "scale", "cub", "cifar100 or cub")
	eng.Flags().IntVar(&tasks, "tasks", 0, "number of tasks (default: the scale's)")
	eng.Flags().IntVar(&floorRuns, "floor-runs", 3, "times the floor is measured (median)")
	eng.Flags().IntVar(&cfg.M, "m", cfg.M, "expansion dimension")
	eng.Flags().IntVar(&cfg.P, "p", cfg.P, "non-zeros per row of W")
	eng.Flags().IntVar(&cfg.K, "k", cfg.K, "top-k")
	c.AddCommand(eng)
	return c
}

func infoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Print the build's linear-algebra backend and threads",
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Printf("linalg backend: %s, %d threads; GOMAXPROCS %d; %s/%s\n",
				linalg.Backend(), linalg.Threads(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
			for _, v := range []string{"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OPENBLAS_L2_SIZE"} {
				if s, ok := os.LookupEnv(v); ok {
					fmt.Printf("%s=%s\n", v, s)
				}
			}
		},
	}
}
