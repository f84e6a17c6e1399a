// Command main is the helper of scripts/beam-processes-repeat: it writes
// a feature file of synthetic samples to run the pipeline on.
//
//	main OUT.npz N D CLASSES SEED
//
// N samples of dimension D around one random centre per class (labels
// 0..CLASSES-1 in turns; each coordinate its centre's plus Gaussian noise
// of deviation 0.8), reproducible from SEED.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/flycl/flycl/format/features"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "beam-processes-repeat:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 5 {
		return fmt.Errorf("usage: main OUT.npz N D CLASSES SEED")
	}
	var v [4]int
	for i, a := range args[1:] {
		n, err := strconv.Atoi(a)
		if err != nil || n <= 0 {
			return fmt.Errorf("argument %d: %q is not a positive integer", i+2, a)
		}
		v[i] = n
	}
	n, d, classes, seed := v[0], v[1], v[2], v[3]
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	centres := make([]float32, classes*d)
	for i := range centres {
		centres[i] = float32(r.NormFloat64())
	}
	x := make([]float32, n*d)
	labels := make([]int, n)
	for i := range n {
		labels[i] = i % classes
		for j := range d {
			x[i*d+j] = centres[labels[i]*d+j] + float32(0.8*r.NormFloat64())
		}
	}
	return features.Save(args[0], &features.Set{X: x, N: n, D: d, Labels: labels})
}
