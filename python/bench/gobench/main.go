// Command gobench times, in Go, the calls python/bench/overhead.py times
// from Python, on the same inputs, so that the two can be set side by side
// in one run:
//
//	gobench learn  -x X.f32 -y Y.i32 -d D -tasks T -config '{"m":10000,...}'
//	gobench scores -model FILE -x X.f32 -d D -n N
//
// learn learns the rows of X (float32, row-major, n×d) with labels Y
// (int32) as T equal consecutive tasks with flycl.Model.Learn (one task, λ by GCV) and
// prints each task's wall time; scores loads a model file and times
// Predictor.Scores on single rows of X, N calls, and prints the median and
// the minimum per call. Output: one JSON object on stdout.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: gobench learn|scores [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	xPath := fs.String("x", "", "features, float32 little-endian, row-major")
	yPath := fs.String("y", "", "labels, int32 little-endian")
	d := fs.Int("d", 0, "feature dimension")
	tasks := fs.Int("tasks", 1, "equal consecutive tasks")
	cfgJSON := fs.String("config", "{}", "flycl.Config as JSON")
	model := fs.String("model", "", "model file")
	n := fs.Int("n", 1000, "calls")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *d <= 0 {
		return fmt.Errorf("-d must be positive")
	}
	x, err := readF32(*xPath)
	if err != nil {
		return err
	}
	ctx := context.Background()
	switch args[0] {
	case "learn":
		y, err := readI32(*yPath)
		if err != nil {
			return err
		}
		var cfg flycl.Config
		if err := json.Unmarshal([]byte(*cfgJSON), &cfg); err != nil {
			return fmt.Errorf("-config: %w", err)
		}
		m, err := flycl.New(cfg, *d)
		if err != nil {
			return err
		}
		rows := len(y) / *tasks
		var secs, lambdas []float64
		for t := range *tasks {
			xs, ys := x[t*rows**d:(t+1)*rows**d], y[t*rows:(t+1)*rows]
			t0 := time.Now()
			rec, err := m.Learn(ctx, xs, ys, nil)
			if err != nil {
				return err
			}
			secs = append(secs, time.Since(t0).Seconds())
			lambdas = append(lambdas, rec.Lambda)
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"seconds": secs, "lambdas": lambdas})
	case "scores":
		m, err := modelfile.LoadModel(*model)
		if err != nil {
			return err
		}
		p := m.Predictor()
		rows := len(x) / *d
		times := make([]float64, *n)
		for i := range *n {
			row := x[(i%rows)**d : (i%rows+1)**d]
			t0 := time.Now()
			if _, err := p.Scores(ctx, row); err != nil {
				return err
			}
			times[i] = time.Since(t0).Seconds()
		}
		slices.Sort(times)
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"median_s": times[len(times)/2], "min_s": times[0]})
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

func readF32(path string) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of float32", path, len(b))
	}
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x, nil
}

func readI32(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of int32", path, len(b))
	}
	y := make([]int, len(b)/4)
	for i := range y {
		y[i] = int(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return y, nil
}
