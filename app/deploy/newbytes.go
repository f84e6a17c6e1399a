package deploy

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/flycl/flycl"
)

// ErrNoMemory is the error of a new model larger than the memory
// available (CheckNewModel).
var ErrNoMemory = errors.New("deploy: not enough memory for the model")

// NewModelBytes is the memory a new model of cfg (its zero sizes the
// defaults) for d-dimensional features needs before its first learn
// completes: W's columns and values (8 bytes each of m·p) and the
// permutation that draws them (4·d), its dense form (4·m·d, when the
// projection is applied densely), and the m×m statistics with their
// factor's working copy (8·m²). Negative sizes count 0 (Config.Validate
// refuses them); the sum saturates at the largest int64.
func NewModelBytes(cfg flycl.Config, d int) int64 {
	def := flycl.DefaultConfig()
	m, p := cmp.Or(cfg.M, def.M), cmp.Or(cfg.P, def.P)
	if m < 0 || p < 0 || d < 0 {
		return 0
	}
	const most = math.MaxInt64
	mul := func(a, b int64) int64 {
		if a != 0 && b > most/a {
			return most
		}
		return a * b
	}
	sum := int64(0)
	for _, v := range []int64{mul(8, mul(int64(m), int64(p))), mul(4, int64(d)), mul(4, mul(int64(m), int64(d))), mul(8, mul(int64(m), int64(m)))} {
		if v > most-sum {
			return most
		}
		sum += v
	}
	return sum
}

// CheckNewModel returns an error wrapping ErrNoMemory when a new model of
// cfg for d-dimensional features (NewModelBytes) needs more than avail
// bytes (the memory available; 0 or less: unknown, not checked). Go ends
// the process when an allocation fails, so a caller checks here, where
// it still gets an error.
func CheckNewModel(cfg flycl.Config, d int, avail int64) error {
	if b := NewModelBytes(cfg, d); avail > 0 && b > avail {
		def := flycl.DefaultConfig()
		return fmt.Errorf("%w: a model of d=%d, m=%d, p=%d needs about %d MiB, more than the %d MiB of memory available (8·m² bytes of it for the m×m statistics)",
			ErrNoMemory, d, cmp.Or(cfg.M, def.M), cmp.Or(cfg.P, def.P), b>>20, avail>>20)
	}
	return nil
}
