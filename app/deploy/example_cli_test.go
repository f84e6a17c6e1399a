package deploy_test

import (
	"context"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/answer"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/reject"
)

// The body of flycl predict: the model's predictor, the rejection the
// user asked for (--unknown: auto, off or a threshold) over the one the
// model calibrated, one call for the answers, one for the accuracy over
// the labelled inputs, then printing.
func ExamplePredict() {
	ctx := context.Background()
	m, err := deploy.New(flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{0.1, 1, 10}}, 3, nil, nil)
	if err != nil {
		panic(err)
	}
	x := []float32{1, 2, 3, 3, 2, 1, 1.5, 2, 2.5, 2.5, 2, 1.5}
	truth := []string{"cat", "dog", "cat", "dog"}
	if _, err := m.Learn(ctx, x, truth, nil, deploy.LearnOptions{}); err != nil {
		panic(err)
	}

	p := m.Model.Snapshot().Predictor()
	rej, err := reject.ParseRule("off", p.Rejection()) // --unknown off
	if err != nil {
		panic(err)
	}
	preds, err := answer.Predict(ctx, p, rej, x, 2) // --top 2
	if err != nil {
		panic(err)
	}
	for i, pr := range preds {
		fmt.Printf("input %d: %s (truth %s)\n", i, pr.Answer, truth[i])
	}
	acc := answer.Accuracy(preds, truth, p.Classes().Names())
	fmt.Printf("accuracy %.0f%% (%d/%d)\n", 100*acc.Accuracy, acc.Correct, acc.Evaluated)
	// Output:
	// input 0: cat (truth cat)
	// input 1: dog (truth dog)
	// input 2: cat (truth cat)
	// input 3: dog (truth dog)
	// accuracy 100% (4/4)
}
