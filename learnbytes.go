package flycl

import (
	"fmt"

	"github.com/flycl/flycl/ridge"
)

// LearnBytes is an upper bound of the memory, in bytes, that a Learn of n
// samples which adds newClasses classes to the model allocates for the
// task itself: its codes (n×m), the n×n matrices of GCV's dual forms,
// the one-hot targets and fitted scores (n × the classes GCV and the
// calibration see, which grows with the square of the class count when
// every sample is its own class) and the new classes' rows of the
// statistics (newClasses×m). What every learn of the model needs whatever
// the task (the m×m factor, a copy of the classifier) is the model's own
// size and is not counted. The bound holds for every GCV method and scope
// (a test measures the bytes a Learn allocates against it). An online
// learn in mini-batches of b samples needs LearnBytes(b, …) per batch.
func (m *Model) LearnBytes(n, newClasses int) int64 {
	if n <= 0 {
		return 0
	}
	mm := int64(m.cfg.M)
	nn := int64(n)
	fresh := int64(max(newClasses, 0))
	classes := int64(m.Classes().Len()) + fresh
	// n×n: the dual forms (dual, band and eigen for n < m; from n = m on
	// GCV works on m×m, the model's own size, unless dual or eigen is
	// forced, which keep their n×n form)
	sq := mul(min(nn, mm), min(nn, mm))
	if g := m.cfg.GCV; g == ridge.GCVDual || g == ridge.GCVEigen {
		sq = mul(nn, nn)
	}
	// the codes in float32, and in float64 for GCV on all samples
	perCode := int64(8)
	if m.cfg.GCVScope == GCVAll {
		perCode = 16
	}
	return add(mul(perCode, mul(nn, mm)), mul(32, sq), mul(24, mul(nn, classes)), mul(16, mul(fresh, mm)))
}

const most = 1<<63 - 1

// mul is a·b for sizes a, b >= 0, saturated at the largest int64.
func mul(a, b int64) int64 {
	if a != 0 && b > most/a {
		return most
	}
	return a * b
}

// add is the sum of sizes >= 0, saturated at the largest int64.
func add(x ...int64) int64 {
	var s int64
	for _, v := range x {
		if v > most-s {
			return most
		}
		s += v
	}
	return s
}

// MemoryError is a learn refused because its memory (LearnBytes) is more
// than a limit the caller set: Samples and Classes (the classes of the
// model after it, with M) give the bound Bytes, Limit is the limit. It is
// input the caller should refuse (IsInput reports true): a server answers
// it 413 and the client splits the task (or learns it online in smaller
// batches).
type MemoryError struct {
	Samples, Classes, M int
	Bytes, Limit        int64
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("flycl: a learn of %d samples with %d classes at m=%d needs up to %d bytes of memory; the limit is %d bytes (split the task, or learn it online in smaller batches)",
		e.Samples, e.Classes, e.M, e.Bytes, e.Limit)
}

// BadInput marks it as input refused (IsInput).
func (e *MemoryError) BadInput() bool { return true }

// CheckLearnBytes returns a *MemoryError when a learn of n samples adding
// newClasses classes needs more than limit bytes (LearnBytes); limit <= 0
// is no limit.
func (m *Model) CheckLearnBytes(n, newClasses int, limit int64) error {
	if limit <= 0 {
		return nil
	}
	if b := m.LearnBytes(n, newClasses); b > limit {
		return &MemoryError{Samples: n, Classes: m.Classes().Len() + newClasses, M: m.cfg.M, Bytes: b, Limit: limit}
	}
	return nil
}
