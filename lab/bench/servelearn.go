package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/internal/proctime"
)

// ServeLearnOptions are the inputs of ServeLearn.
type ServeLearnOptions struct {
	M, D       int    // expansion and feature dimension
	N, Classes int    // samples and new classes per learn
	Learns     int    // learns, one after another
	Dir        string // folder for the model files ("": a temporary one, removed afterwards)
	Policy     flycl.LambdaPolicy
	Checkpoint int // the journal path's checkpoint interval (entries)
	// Paths are the names of the paths to run (nil: all of
	// refactor+rewrite, update+journal and dual+journal).
	Paths []string
}

func (o ServeLearnOptions) check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"m", o.M}, {"d", o.D}, {"n", o.N}, {"classes", o.Classes}, {"learns", o.Learns}} {
		if f.v < 1 {
			return fmt.Errorf("bench: %s %d: must be at least 1", f.name, f.v)
		}
	}
	if o.Classes > o.N {
		return fmt.Errorf("bench: %d classes: more than the %d samples", o.Classes, o.N)
	}
	return nil
}

// ServeLearn measures what one learn costs the server's file backend
// (server.FileBackend.Learn: learn, save, publish) on synthetic feature
// vectors, on two paths one after the other: refactor and rewrite the
// file on every learn, and flycl serve's default (factor update, journal,
// checkpoints). It prints each learn's wall time, save and factor time,
// resident memory before, peak during and their difference next to G's
// size, then a reopen of the file, and the p50 of both paths; warnings go
// to warn.
func ServeLearn(ctx context.Context, out, warn io.Writer, o ServeLearnOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	m, d, n, classes, learns, dir, policy, checkpoint := o.M, o.D, o.N, o.Classes, o.Learns, o.Dir, o.Policy, o.Checkpoint
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
	if !procmem.ResetPeak() {
		fmt.Fprintln(warn, "warning: cannot reset the peak-RSS counter (/proc/self/clear_refs): peaks are since start")
	}
	gMiB := float64(m) * float64(m) * 4 / (1 << 20)
	fmt.Fprintf(out, "serve-learn: m=%d d=%d, %d samples × %d new classes per learn, λ policy %s; G (m×m float32) = %.0f MiB; GOMAXPROCS=%d\n",
		m, d, n, classes, policy, gMiB, runtime.GOMAXPROCS(0))
	// Two ways of the server's file backend, one after the other
	// on the same learns: every learn refactors G + λI and
	// rewrites the model file (the path before factor updates and
	// the journal), and the default of flycl serve (the factor
	// updated by the learn's rank-n term while λ stays, the change
	// appended to the journal, a checkpoint every 16 changes).
	// A third path is the same as the second for a model in the dual
	// form (flycl.Config.Dual: the samples' codes and their n×n kernel,
	// held while the samples stay within it: n·learns here).
	paths := []struct {
		name string
		opt  server.FileOptions
		dual bool
	}{
		{"refactor+rewrite", server.FileOptions{Refactor: true}, false},
		{"update+journal", server.FileOptions{Checkpoints: server.Checkpoints{Entries: checkpoint, Bytes: 256 << 20}}, false},
		{"dual+journal", server.FileOptions{Checkpoints: server.Checkpoints{Entries: checkpoint, Bytes: 256 << 20}}, true},
	}
	p50, cpu50 := make([]time.Duration, len(paths)), make([]time.Duration, len(paths))
	for pi, p := range paths {
		if o.Paths != nil && !slices.Contains(o.Paths, p.name) {
			continue
		}
		path := filepath.Join(dir, "bench-"+p.name+".flycl")
		os.Remove(path)
		os.Remove(path + ".journal")
		opt := p.opt
		pc := cfg
		if p.dual {
			pc.Dual = n * learns
		}
		opt.Create = func() (*flycl.Model, error) { return flycl.New(pc, d) }
		opt.LambdaPolicy = policy
		be, err := server.OpenFileWith(ctx, path, opt)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n%s\n%-6s %8s %8s %8s %9s %8s %12s %12s %12s %8s\n", p.name, "learn", "version", "learn_s", "save_s", "factor_s", "cpu_s", "rss_MiB", "peak_MiB", "extra_MiB", "peak/G")
		r := rand.New(rand.NewPCG(1, 2))
		var walls, cpus []time.Duration
		for l := 0; l < learns; l++ {
			x, cls := blobs(r, n, d, classes)
			names := make([]string, n)
			for i, c := range cls {
				names[i] = fmt.Sprintf("c%d-%d", l, c)
			}
			runtime.GC()
			debug.FreeOSMemory()
			procmem.ResetPeak()
			before := procmem.Current()
			t, c0 := time.Now(), proctime.CPU()
			rep, sn, err := be.Learn(ctx, x, names, deploy.LearnOptions{})
			if err != nil {
				be.Close()
				return err
			}
			wall, cpu := time.Since(t), proctime.CPU()-c0
			if l > 0 { // the first learn factors from scratch on either path
				walls, cpus = append(walls, wall), append(cpus, cpu)
			}
			peak := procmem.Peak()
			save := rep.Save
			fmt.Fprintf(out, "%-6d %8d %8.3f %8.3f %9.3f %8.3f %12.0f %12.0f %12.0f %8.2f\n", l+1, sn.Version(), (wall - save).Seconds(), save.Seconds(), rep.Stages.Factor.Seconds(), cpu.Seconds(),
				float64(before)/(1<<20), float64(peak)/(1<<20), float64(peak-before)/(1<<20), float64(peak)/(1<<20)/gMiB)
		}
		be.Close()
		slices.Sort(walls)
		slices.Sort(cpus)
		if len(walls) > 0 {
			p50[pi], cpu50[pi] = walls[len(walls)/2], cpus[len(cpus)/2]
		}
		// what a restart costs: the file (and journal) read back into
		// a new backend, the old one gone
		be = nil
		runtime.GC()
		debug.FreeOSMemory()
		procmem.ResetPeak()
		before := procmem.Current()
		t := time.Now()
		re, err := server.OpenFileWith(ctx, path, server.FileOptions{Checkpoints: p.opt.Checkpoints})
		if err != nil {
			return err
		}
		peak := procmem.Peak()
		fmt.Fprintf(out, "%-6s %8d %8.2f %8s %9s %8s %12.0f %12.0f %12.0f %8.2f\n", "reopen", re.Current().Version(), time.Since(t).Seconds(), "-", "-", "-",
			float64(before)/(1<<20), float64(peak)/(1<<20), float64(peak-before)/(1<<20), float64(peak)/(1<<20)/gMiB)
		re.Close()
	}
	if learns > 1 && o.Paths != nil {
		for pi, p := range paths {
			if slices.Contains(o.Paths, p.name) {
				fmt.Fprintf(out, "\np50 of learns 2..%d, learn and durable save: %s %.4f s (CPU time %.4f s)\n", learns, p.name, p50[pi].Seconds(), cpu50[pi].Seconds())
			}
		}
	} else if learns > 1 {
		fmt.Fprintf(out, "\np50 of learns 2..%d, learn and durable save: %s %.3f s, %s %.3f s: %.1f× faster; %s %.4f s: %.1f× faster than %s\n", learns,
			paths[0].name, p50[0].Seconds(), paths[1].name, p50[1].Seconds(), p50[0].Seconds()/p50[1].Seconds(),
			paths[2].name, p50[2].Seconds(), p50[1].Seconds()/p50[2].Seconds(), paths[1].name)
	}
	return nil
}

// blobs draws n d-dimensional feature vectors of classes Gaussian
// clusters (random unit-normal centres, spread 0.5); sample i is of class
// i % classes.
func blobs(r *rand.Rand, n, d, classes int) ([]float32, []int) {
	centres := make([]float32, classes*d)
	for i := range centres {
		centres[i] = float32(r.NormFloat64())
	}
	x, cls := make([]float32, n*d), make([]int, n)
	for i := range n {
		c := i % classes
		cls[i] = c
		for j := range d {
			x[i*d+j] = centres[c*d+j] + 0.5*float32(r.NormFloat64())
		}
	}
	return x, cls
}
