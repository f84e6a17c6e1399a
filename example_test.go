package flycl_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/flycl/flycl"
)

// blobs draws n samples of d-dimensional features around a fixed mean
// per label.
func blobs(seed uint64, n, d int, labels []int) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 0))
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := range y {
		y[i] = labels[i%len(labels)]
		mean := rand.New(rand.NewPCG(uint64(y[i]), 1))
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(mean.NormFloat64() + 0.5*r.NormFloat64())
		}
	}
	return x, y
}

// Learn two tasks one after the other; the model keeps recognising the
// classes of the first task after learning the second.
func Example() {
	ctx := context.Background()
	const d = 32
	cfg := flycl.Config{M: 2000, P: 10, K: 600, Lambdas: []float64{1, 10, 100, 1000}}
	model, err := flycl.New(cfg, d)
	if err != nil {
		panic(err)
	}
	x1, y1 := blobs(1, 200, d, []int{10, 20})
	x2, y2 := blobs(2, 200, d, []int{30, 40})
	model.Learn(ctx, x1, y1, nil)
	model.Learn(ctx, x2, y2, nil)

	test1, labels1 := blobs(3, 100, d, []int{10, 20})
	acc, _ := model.Predictor().Accuracy(ctx, test1, labels1)
	fmt.Println("classes:", model.Classes().Labels())
	fmt.Printf("accuracy on the first task after the second: %.2f\n", acc)
	// Output:
	// classes: [10 20 30 40]
	// accuracy on the first task after the second: 1.00
}

// Online learning: update and re-solve after every mini-batch. With a
// fixed λ the result equals learning the whole task at once.
func ExampleModel_Learn_online() {
	ctx := context.Background()
	const d = 16
	cfg := flycl.Config{M: 1000, P: 8, K: 300}
	model, _ := flycl.New(cfg, d)
	x, y := blobs(4, 100, d, []int{1, 2, 3})
	for lo := 0; lo < 100; lo += 10 {
		model.Learn(ctx, x[lo*d:(lo+10)*d], y[lo:lo+10], &flycl.LearnOptions{Lambda: 100})
	}
	fmt.Println(model.Samples(), "samples,", len(model.History()), "updates, lambda", model.Lambda())
	// Output: 100 samples, 10 updates, lambda 100
}

// A model learns a task, then a second one, names a class, and forgets a
// class exactly from the samples it learned.
func ExampleModel() {
	ctx := context.Background()
	const d = 16
	model, err := flycl.New(flycl.Config{M: 1000, P: 8, K: 300, Lambdas: []float64{1, 10, 100}}, d)
	if err != nil {
		panic(err)
	}
	x1, y1 := blobs(5, 60, d, []int{1, 2})
	x2, y2 := blobs(6, 60, d, []int{3})
	rec, _ := model.Learn(ctx, x1, y1, nil) // λ by GCV on the task
	fmt.Println("new classes:", rec.NewClasses, "λ:", rec.Lambda)
	rec, _ = model.Learn(ctx, x2, y2, &flycl.LearnOptions{Lambda: 10}) // a fixed λ
	fmt.Println("new classes:", rec.NewClasses, "λ:", rec.Lambda)
	model.SetClassName(3, "three")

	var x3 []float32 // class 3's samples, as learned
	for i, l := range y2 {
		if l == 3 {
			x3 = append(x3, x2[i*d:(i+1)*d]...)
		}
	}
	rec, _ = model.Forget(ctx, 3, x3)
	fmt.Println("removed:", rec.Removed, "classes:", model.Classes().Names(), "samples:", model.Samples())
	// Output:
	// new classes: [1 2] λ: 100
	// new classes: [3] λ: 10
	// removed: [3] classes: [1 2] samples: 60
}

// A snapshot is an immutable copy of a model: the model goes on learning,
// and the snapshot becomes a model again at the version it was taken.
func ExampleSnapshot() {
	ctx := context.Background()
	const d = 16
	model, _ := flycl.New(flycl.Config{M: 1000, P: 8, K: 300}, d)
	x, y := blobs(7, 60, d, []int{1, 2})
	model.Learn(ctx, x, y, nil)
	snap := model.Snapshot()

	x2, y2 := blobs(8, 30, d, []int{3})
	model.Learn(ctx, x2, y2, nil)
	back, _ := snap.Model()
	fmt.Println("model:", model.Classes().Labels(), "version", model.Version())
	fmt.Println("snapshot:", back.Classes().Labels(), "version", back.Version())
	// Output:
	// model: [1 2 3] version 2
	// snapshot: [1 2] version 1
}

// A predictor answers as the model was when it was taken, safely from
// many goroutines, while the model learns on.
func ExamplePredictor() {
	ctx := context.Background()
	const d = 16
	model, _ := flycl.New(flycl.Config{M: 1000, P: 8, K: 300}, d)
	x, y := blobs(9, 60, d, []int{1, 2})
	model.Learn(ctx, x, y, nil)
	model.SetClassName(1, "cat")
	model.SetClassName(2, "dog")
	pred := model.Predictor()

	x2, y2 := blobs(10, 30, d, []int{3})
	model.Learn(ctx, x2, y2, nil)
	test, _ := blobs(11, 1, d, []int{2})
	top, _ := pred.Top(ctx, test, 2)
	for _, r := range top[0] {
		fmt.Println(r.Name)
	}
	fmt.Println("predictor classes:", pred.Classes().Labels(), "model classes:", model.Classes().Labels())
	// Output:
	// dog
	// cat
	// predictor classes: [1 2] model classes: [1 2 3]
}

// A model's classes: labels in class-index order, their names and sample
// counts, and the label of a name.
func ExampleClassList() {
	ctx := context.Background()
	const d = 16
	model, _ := flycl.New(flycl.Config{M: 1000, P: 8, K: 300}, d)
	labels, _ := model.LabelsFor([]string{"cat", "dog", "cat"}) // new names get new labels
	x, y := blobs(12, 30, d, labels)
	model.Learn(ctx, x, y, nil)

	classes := model.Classes()
	fmt.Println(classes.Labels(), classes.Names(), classes.Counts())
	fmt.Println(classes.LabelOf("dog"))
	// Output:
	// [0 1] [cat dog] [20 10]
	// 1 true
}
