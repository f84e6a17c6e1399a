package flycl

import (
	"context"
	"testing"

	"github.com/flycl/flycl/internal/proctime"
	"github.com/flycl/flycl/reject"
)

// BenchmarkDualLearn: learns of 20 samples (2 new classes each) into a
// model in the dual form at m = 10000 that holds 100 samples, with the
// calibration on (as flycl serve learns); cpu-ms/op is the process's
// CPU time per learn (both cores).
var nPre, benchM = 5, 10000

func BenchmarkDualLearn(b *testing.B) {
	ctx := context.Background()
	cfg := Config{M: benchM, K: KForM(benchM), LambdaScale: LambdaRelative, WidenGrid: true, Dual: 100000}
	const d = 512
	m, _ := New(cfg, d)
	m.SetCalibration(&reject.Calibration{})
	for l := range nPre {
		x, y := clusters(uint64(l), 20, d, []int{2 * l, 2*l + 1}, 0.5)
		m.Learn(ctx, x, y, nil)
	}
	x, y := clusters(99, 20, d, []int{1000, 1001}, 0.5)
	b.ResetTimer()
	c0 := proctime.CPU()
	for range b.N {
		c := m.Clone()
		c.Learn(ctx, x, y, nil)
	}
	b.ReportMetric(float64(proctime.CPU()-c0)/float64(b.N)/1e6, "cpu-ms/op")
}
