package flycl

import (
	"context"
	"testing"

	"github.com/flycl/flycl/internal/proctime"
	"github.com/flycl/flycl/reject"
)

// photoDefaults is a new model from photos at its defaults: m = 10000,
// k = 3000, p = 300, the dual form (deploy.DefaultImageConfig), for
// d = 1280 features.
func photoDefaults() Config {
	return Config{M: 10000, K: KForM(10000), LambdaScale: LambdaRelative, WidenGrid: true, Dual: DualLimit(10000)}
}

// BenchmarkDualFirstLearn15: what a new model from 15 photos (3 classes ×
// 5) costs after extraction, at the defaults of a model from photos with
// calibration on: New (W generated from its seed) and the first learn.
// cpu-ms/op is the process's CPU time per op (both cores), the measure to
// compare on a loaded machine.
func BenchmarkDualFirstLearn15(b *testing.B) {
	ctx := context.Background()
	const d = 1280
	x, y := clusters(7, 15, d, []int{0, 1, 2}, 0.5)
	b.Run("new+learn", func(b *testing.B) {
		c0 := proctime.CPU()
		for range b.N {
			m, err := New(photoDefaults(), d)
			if err != nil {
				b.Fatal(err)
			}
			m.SetCalibration(&reject.Calibration{})
			if _, err := m.Learn(ctx, x, y, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(proctime.CPU()-c0)/float64(b.N)/1e6, "cpu-ms/op")
	})
	b.Run("learn", func(b *testing.B) {
		m, err := New(photoDefaults(), d)
		if err != nil {
			b.Fatal(err)
		}
		m.SetCalibration(&reject.Calibration{})
		b.ResetTimer()
		c0 := proctime.CPU()
		for range b.N {
			c := m.Clone()
			if _, err := c.Learn(ctx, x, y, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(proctime.CPU()-c0)/float64(b.N)/1e6, "cpu-ms/op")
	})
}
