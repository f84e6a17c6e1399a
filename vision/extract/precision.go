package extract

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/transform"
)

// CalibrationImages preprocesses n images of ds spread evenly over it
// (image i·Len/n, i = 0..n-1, so class-sorted data sets give every class a
// share): the deterministic calibration set of an int8 backbone. It
// returns the images (n×3×Crop×Crop) and n, capped at ds.Len().
func CalibrationImages(ctx context.Context, ds dataset.Dataset, preset transform.Preset, n int) ([]float32, int, error) {
	if n > ds.Len() {
		n = ds.Len()
	}
	if n <= 0 {
		return nil, 0, fmt.Errorf("calibration: no images")
	}
	per := 3 * preset.Crop * preset.Crop
	x := make([]float32, n*per)
	errs := make([]error, n)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pre := preset.NewPreprocessor()
			for i := range next {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					continue
				}
				k := int(int64(i) * int64(ds.Len()) / int64(n))
				img, err := ds.Image(k)
				if err != nil {
					errs[i] = fmt.Errorf("calibration image %d (%s): %w", k, ds.Path(k), err)
					continue
				}
				pre.Tensor(img, x[i*per:(i+1)*per])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	return x, n, nil
}

// Int8 returns m's int8 graph, calibrated by method on n images of the
// training split train preprocessed by preset (see CalibrationImages).
// Calibrate on the training split for every split, so all share one graph.
func Int8(ctx context.Context, m *backbone.Model, train dataset.Dataset, preset transform.Preset, method backbone.CalibMethod, n, threads int) (*backbone.Model, error) {
	if m.Precision == backbone.INT8 {
		return m, nil
	}
	if preset.Crop != m.Size {
		return nil, fmt.Errorf("%s: preset %s crops to %d, the model takes %d", m.Name, preset.Name, preset.Crop, m.Size)
	}
	x, k, err := CalibrationImages(ctx, train, preset, n)
	if err != nil {
		return nil, err
	}
	return m.Int8(ctx, method, x, k, threads)
}
