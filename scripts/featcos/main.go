// Command featcos compares two feature files of the same images (e.g. fp32
// and int8 features of one backbone): it prints the median and the worst
// cosine similarity of corresponding rows.
//
//	go run ./scripts/featcos A.npz B.npz
package main

import (
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/flycl/flycl/format/features"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "featcos:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: featcos A.npz B.npz")
	}
	a, err := features.Load(args[0])
	if err != nil {
		return err
	}
	b, err := features.Load(args[1])
	if err != nil {
		return err
	}
	if a.N != b.N || a.D != b.D {
		return fmt.Errorf("%s is %d×%d, %s is %d×%d", args[0], a.N, a.D, args[1], b.N, b.D)
	}
	if a.N == 0 {
		return fmt.Errorf("%s: no rows", args[0])
	}
	cos := make([]float64, a.N)
	for i := range cos {
		if a.Paths != nil && b.Paths != nil && a.Paths[i] != b.Paths[i] {
			return fmt.Errorf("row %d: %s vs %s", i, a.Paths[i], b.Paths[i])
		}
		var ab, aa, bb float64
		for j, x := range a.Row(i) {
			y := float64(b.Row(i)[j])
			ab += float64(x) * y
			aa += float64(x) * float64(x)
			bb += y * y
		}
		cos[i] = ab / math.Sqrt(aa*bb)
	}
	slices.Sort(cos)
	fmt.Printf("feature cosine on %d images: median %.4f, worst %.4f\n", a.N, cos[a.N/2], cos[0])
	return nil
}
