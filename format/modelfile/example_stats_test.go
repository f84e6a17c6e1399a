package modelfile_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// Two workers each compute the statistics of their half of a task; the
// files are merged and the model learns the task from them.
func ExampleMergeStats() {
	ctx := context.Background()
	cfg := flycl.Config{M: 200, P: 6, K: 60, Seed: 1, Lambdas: []float64{1, 10, 100, 1000}}
	const d = 16
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 120*d)
	labels := make([]int, 120)
	for i := range labels {
		labels[i] = i % 2
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(r.NormFloat64() + 3*float64(labels[i]*(j%2)))
		}
	}
	names := map[int]string{0: "cat", 1: "dog"}

	var files [][]byte
	for shard := 0; shard < 2; shard++ { // on two machines
		worker, _ := flycl.New(cfg, d) // same configuration and W everywhere
		lo, hi := shard*60, shard*60+60
		st, err := worker.TaskStats(ctx, x[lo*d:hi*d], labels[lo:hi])
		if err != nil {
			panic(err)
		}
		var classNames, keys []string
		for _, l := range st.Labels {
			classNames = append(classNames, names[l])
		}
		for i := lo; i < hi; i++ {
			keys = append(keys, fmt.Sprintf("train#%d", i)) // sample identities
		}
		f, err := modelfile.NewStatsFile(worker, nil, st, classNames, keys, modelfile.Shard{Index: shard, Count: 2, Source: "train"})
		if err != nil {
			panic(err)
		}
		var b bytes.Buffer
		if err := modelfile.EncodeStats(&b, f); err != nil {
			panic(err)
		}
		files = append(files, b.Bytes())
	}

	var parts []*modelfile.StatsFile
	for _, b := range files {
		f, err := modelfile.DecodeStats(bytes.NewReader(b))
		if err != nil {
			panic(err)
		}
		parts = append(parts, f)
	}
	merged, err := modelfile.MergeStats(parts...)
	if err != nil {
		panic(err)
	}
	model, _ := flycl.New(cfg, d)
	if _, err := modelfile.LearnStats(ctx, model, nil, merged, 0); err != nil {
		panic(err)
	}
	fmt.Println(model.Classes().Names(), model.Samples())
	_, err = modelfile.MergeStats(parts[0], parts[0])
	fmt.Println(err != nil)
	// Output:
	// [cat dog] 120
	// true
}
