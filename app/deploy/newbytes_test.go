package deploy

import (
	"errors"
	"math"
	"testing"

	"github.com/flycl/flycl"
)

// NewModelBytes against sizes counted by hand, the defaults for zero
// sizes, 0 for negative ones and the largest int64 for sizes whose
// product overflows; CheckNewModel refuses above avail only, and never
// when avail is unknown.
func TestNewModelBytes(t *testing.T) {
	def := flycl.DefaultConfig()
	for _, c := range []struct {
		cfg  flycl.Config
		d    int
		want int64
	}{
		// 8·64·4 + 4·8 + 4·64·8 + 8·64²
		{flycl.Config{M: 64, P: 4}, 8, 2048 + 32 + 2048 + 32768},
		{flycl.Config{}, 1280, 8*int64(def.M)*int64(def.P) + 4*1280 + 4*int64(def.M)*1280 + 8*int64(def.M)*int64(def.M)},
		{flycl.Config{M: -1, P: 4}, 8, 0},
		{flycl.Config{M: 64, P: 4}, -1, 0},
		{flycl.Config{M: math.MaxInt, P: 4}, 8, math.MaxInt64},
		{flycl.Config{M: 1 << 31, P: 1 << 31}, 1 << 31, math.MaxInt64},
	} {
		if got := NewModelBytes(c.cfg, c.d); got != c.want {
			t.Errorf("m=%d p=%d d=%d: %d bytes, want %d", c.cfg.M, c.cfg.P, c.d, got, c.want)
		}
	}
	cfg, need := flycl.Config{M: 64, P: 4}, int64(36896)
	for _, c := range []struct {
		avail int64
		fails bool
	}{{need - 1, true}, {need, false}, {0, false}, {-1, false}} {
		err := CheckNewModel(cfg, 8, c.avail)
		if c.fails != errors.Is(err, ErrNoMemory) || (!c.fails && err != nil) {
			t.Errorf("%d bytes available for %d: %v", c.avail, need, err)
		}
	}
}
