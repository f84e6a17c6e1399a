package reject_test

import (
	"fmt"
	"math"

	"github.com/flycl/flycl/reject"
)

// A learner calibrates its rejection every time it learns: it computes
// the exact leave-one-out scores of at most MaxSamples of the samples it
// learned (flycl.Model does, after SetCalibration; its LeaveOneOutScores
// gives them to a caller), and FromPool turns that pool into a Rule: the
// split-conformal threshold that keeps the share Keep of new samples of
// the learned classes. The rule then answers "unknown" for a sample whose
// score is below the threshold.
func ExampleCalibration() {
	c := reject.Calibration{Score: reject.ScoreTop, Keep: 0.9}.WithDefaults()
	if err := c.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("score", c.Score, "keep", c.Keep, "max samples", c.MaxSamples)
	// a learn of 1000 samples computes the leave-one-out scores of 256 of
	// them, spread evenly over it
	fmt.Println("samples of a learn of 1000:", len(reject.CalibrationSamples(1000, c.MaxSamples)))

	// The leave-one-out top scores of 19 learned samples (newest first):
	// each one's largest class score under the model solved without it.
	pool := []float32{
		0.92, 0.81, 0.75, 0.88, 0.64, 0.97, 0.70, 0.83, 0.59, 0.90,
		0.78, 0.86, 0.45, 0.73, 0.95, 0.67, 0.80, 0.84, 0.76,
	}
	rule := reject.FromPool(c, pool, 0) // no temperature fitted: no probabilities
	fmt.Println(rule)

	// New samples' class scores (one row of the classes' scores each).
	for _, row := range [][]float32{
		{0.85, 0.10, 0.02}, // clearly one class
		{0.30, 0.28, 0.25}, // looks like none of them
	} {
		fmt.Printf("%v unknown: %v\n", row, rule.Reject(row, math.NaN()))
	}
	// Output:
	// score top keep 0.9 max samples 256
	// samples of a learn of 1000: 256
	// unknown below top score 0.59: keeps 90% of new samples of the learned classes in expectation (split-conformal, 19 leave-one-out samples; asked 90%); no probabilities
	// [0.85 0.1 0.02] unknown: false
	// [0.3 0.28 0.25] unknown: true
}

// A calibration's defaults, and one that does not validate.
func ExampleCalibration_WithDefaults() {
	c := reject.Calibration{}.WithDefaults()
	fmt.Println(c.Score, c.Keep, c.MaxSamples, c.Validate())

	c.Keep = 1.5
	fmt.Println(c.Validate())
	// Output:
	// top+cosine 0.95 256 <nil>
	// reject: calibration keep share 1.5 is not in (0, 1]
}

// The default score, top+cosine, needs two values of every sample: its
// top class score and the cosine of its code to the nearest class sum
// (flycl.Predictor.ScoresCosines computes both for new samples). Its pool
// holds them in pairs; FromPool standardizes each by the pool's mean and
// standard deviation. A sample whose cosine was not computed (NaN) is
// rejected.
func ExampleFromPool_topCosine() {
	c := reject.Calibration{Keep: 0.9}.WithDefaults()
	pool := []float32{ // (top score, cosine) of 10 samples
		0.90, 0.80, 0.85, 0.75, 0.70, 0.72, 0.95, 0.85, 0.80, 0.78,
		0.60, 0.65, 0.88, 0.82, 0.75, 0.70, 0.92, 0.79, 0.83, 0.77,
	}
	rule := reject.FromPool(c, pool, 0)
	fmt.Println(rule.Score, "from", rule.Samples, "samples, keeps", rule.Guaranteed() >= c.Keep)

	for _, s := range []struct {
		row []float32
		cos float64
	}{
		{[]float32{0.85, 0.10}, 0.80},       // a high score near a class
		{[]float32{0.85, 0.10}, 0.20},       // a high score, but far from every class
		{[]float32{0.85, 0.10}, math.NaN()}, // no cosine
	} {
		fmt.Printf("top %.2f cosine %.2f unknown: %v\n", s.row[0], s.cos, rule.Reject(s.row, s.cos))
	}
	// Output:
	// top+cosine from 10 samples, keeps true
	// top 0.85 cosine 0.80 unknown: false
	// top 0.85 cosine 0.20 unknown: true
	// top 0.85 cosine NaN unknown: true
}

// The zero Rule rejects nothing; a threshold set by hand (ParseRule of a
// number, as flycl predict --unknown 0.5 takes it) rejects without a
// guarantee; a fitted temperature gives the top class's probability.
func ExampleRule() {
	var off reject.Rule
	fmt.Println(off.Enabled(), off.Reject([]float32{0.01, 0.02}, 0), off)

	rule, err := reject.ParseRule("0.5", reject.Rule{Temperature: 0.5})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rule)
	row := []float32{2, 1, 0}
	p, _ := rule.Probability(row)
	margin, _ := rule.Margin(row, 0)
	fmt.Printf("scores %v: unknown %v, probability %.2f, %.1f above the threshold\n", row, rule.Reject(row, 0), p, margin)
	row = []float32{0.4, 0.3, 0.1}
	fmt.Printf("scores %v: unknown %v\n", row, rule.Reject(row, 0))

	_, err = reject.ParseRule("maybe", rule)
	fmt.Println(err)
	// Output:
	// false false unknown off; no probabilities
	// unknown below top score 0.5 (set by hand: no guarantee); probabilities at temperature 0.5
	// scores [2 1 0]: unknown false, probability 0.87, 1.5 above the threshold
	// scores [0.4 0.3 0.1]: unknown true
	// reject: unknown-rejection "maybe": want auto, off or a finite number
}
