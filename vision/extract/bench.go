package extract

import (
	"context"
	"fmt"
	"time"

	"github.com/flycl/flycl/format/features"
)

// Rates are the images/s of extraction's two stages alone and together.
type Rates struct {
	Images   int
	Decode   float64 // decode + resize + normalise on the worker pool, no inference
	Model    float64 // inference on preprocessed batches held in memory
	EndToEnd float64 // Run (no cache): both stages overlapped
}

// Ratio is EndToEnd / min(Decode, Model): 1 when the overlap hides the
// faster stage completely.
func (r Rates) Ratio() float64 { return r.EndToEnd / min(r.Decode, r.Model) }

// Shared is 1/(1/Decode + 1/Model): the end-to-end rate when both stages
// need the same CPUs all the time (each stage alone was measured on all
// of them), the ceiling on a machine where neither stage leaves cores idle.
func (r Rates) Shared() float64 { return 1 / (1/r.Decode + 1/r.Model) }

// MeasurePipeline measures decode-only, model-only and end-to-end
// images/s of job j's configuration on the first n images of j.Data (no
// cache). Each stage runs once over the n images, in that order.
func MeasurePipeline(ctx context.Context, j Job, n int) (Rates, error) {
	n = min(n, j.Data.Len())
	if n <= 0 {
		return Rates{}, fmt.Errorf("measure: no images")
	}
	if j.BatchSize <= 0 {
		j.BatchSize = 32
	}
	r := Rates{Images: n}
	per := 3 * j.Preset.Crop * j.Preset.Crop
	if j.Preset.Crop != j.Model.Size {
		return r, fmt.Errorf("%s: preset %s crops to %d, the model takes %d", j.Model.Name, j.Preset.Name, j.Preset.Crop, j.Model.Size)
	}
	// decode only, keeping the tensors for the model-only pass
	all := make([]float32, n*per)
	start := time.Now()
	p := newPipeline(ctx, j.Data, j.Preset, 0, n, j.BatchSize, j.Workers, j.Depth)
	for {
		b, err := p.next(ctx)
		if err != nil {
			p.close()
			return r, err
		}
		if b == nil {
			break
		}
		copy(all[b.lo*per:], b.x)
		p.release(b)
	}
	p.close()
	if err := ctx.Err(); err != nil {
		return r, err
	}
	r.Decode = float64(n) / time.Since(start).Seconds()

	// model only: the same batches, already preprocessed
	if j.Output < 0 || j.Output >= len(j.Model.Dims) {
		return r, fmt.Errorf("%s has no output %d", j.Model.Name, j.Output)
	}
	sess, err := j.session()
	if err != nil {
		return r, err
	}
	defer sess.Close()
	if _, err := sess.sess.Run(all[:min(n, j.BatchSize)*per], min(n, j.BatchSize)); err != nil { // warm-up
		return r, err
	}
	start = time.Now()
	for lo := 0; lo < n; lo += j.BatchSize {
		k := min(j.BatchSize, n-lo)
		if _, err := sess.sess.Run(all[lo*per:(lo+k)*per], k); err != nil {
			return r, err
		}
	}
	r.Model = float64(n) / time.Since(start).Seconds()
	all = nil

	// end to end: the extraction loop on the same (warm) session
	out := &features.Set{N: n, D: j.Model.Dims[j.Output], X: make([]float32, n*j.Model.Dims[j.Output])}
	done := 0
	start = time.Now()
	if err := j.batches(ctx, sess, 0, n, out, start, &done); err != nil {
		return r, err
	}
	r.EndToEnd = float64(n) / time.Since(start).Seconds()
	return r, nil
}
