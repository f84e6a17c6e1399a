package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/proctime"
	"github.com/flycl/flycl/reject"
)

// DualOptions are the inputs of Dual.
type DualOptions struct {
	Ms      []int // expansion dimensions
	Ns      []int // samples the model holds before the timed learn
	PrimalN []int // the n at which the primal form is timed too (its cost hardly depends on n)
	D       int   // feature dimension
	Add     int   // samples of the timed learn
	Classes int   // classes of the samples
}

// Dual measures the crossover between the two forms of a model
// (flycl.Config.Dual): for each m and n, a model that holds n samples
// learns Add more (GCV on the learn, the calibration on, as flycl serve
// learns), in the dual form and, at the n of PrimalN, in the primal form;
// it prints the learn's wall time, the CPU time of the process during it
// (all threads: on a loaded machine the wall time measures the load, the
// CPU time the work), and the memory each form holds for its
// statistics (dual: the codes, 8 bytes per non-zero, K and its
// eigenvectors, 16·n² bytes; primal: G, 4·m² bytes).
func Dual(ctx context.Context, out io.Writer, o DualOptions) error {
	if o.D < 1 || o.Add < 1 || o.Classes < 1 || len(o.Ms) == 0 || len(o.Ns) == 0 {
		return fmt.Errorf("bench: dual: --d, --add, --classes must be at least 1 and --m, --n given")
	}
	fmt.Fprintf(out, "dual crossover: d=%d, a learn of %d samples into a model of n samples (%d classes), GCV and calibration on; GOMAXPROCS=%d\n",
		o.D, o.Add, o.Classes, runtime.GOMAXPROCS(0))
	fmt.Fprintf(out, "%6s %6s %7s %9s %9s %10s\n", "m", "n", "form", "learn_s", "cpu_s", "held_MiB")
	for _, m := range o.Ms {
		cfg := flycl.Config{M: m, K: flycl.KForM(m), P: min(300, o.D), LambdaScale: flycl.LambdaRelative, WidenGrid: true}
		for _, n := range o.Ns {
			forms := []string{"dual"}
			for _, p := range o.PrimalN {
				if p == n {
					forms = append(forms, "primal")
				}
			}
			for _, form := range forms {
				c := cfg
				if form == "dual" {
					c.Dual = n + o.Add
				}
				wall, cpu, held, err := dualLearn(ctx, c, o, n)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%6d %6d %7s %9.3f %9.3f %10.1f\n", m, n, form, wall.Seconds(), cpu.Seconds(), held/(1<<20))
			}
		}
	}
	return nil
}

// dualLearn times one learn of o.Add samples into a model of cfg that
// learned n (in learns of at most 256), and returns the bytes its
// statistics hold after it.
func dualLearn(ctx context.Context, cfg flycl.Config, o DualOptions, n int) (wall, cpu time.Duration, held float64, err error) {
	model, err := flycl.New(cfg, o.D)
	if err != nil {
		return 0, 0, 0, err
	}
	if err := model.SetCalibration(&reject.Calibration{}); err != nil {
		return 0, 0, 0, err
	}
	r := rand.New(rand.NewPCG(3, 4))
	x, cls := blobs(r, n+o.Add, o.D, o.Classes)
	for lo := 0; lo < n; lo += 256 {
		hi := min(n, lo+256)
		if _, err := model.Learn(ctx, x[lo*o.D:hi*o.D], cls[lo:hi], nil); err != nil {
			return 0, 0, 0, err
		}
	}
	runtime.GC()
	t, c := time.Now(), proctime.CPU()
	if _, err := model.Learn(ctx, x[n*o.D:], cls[n:], nil); err != nil {
		return 0, 0, 0, err
	}
	wall, cpu = time.Since(t), proctime.CPU()-c
	st := model.Snapshot().State()
	held = 4 * float64(cfg.M) * float64(cfg.M)
	if st.Dual != nil {
		s := float64(st.Dual.Samples())
		held = 8*float64(st.Dual.NonZeros()) + 16*s*s
	}
	return wall, cpu, held, nil
}
