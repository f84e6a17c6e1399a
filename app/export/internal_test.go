package export

import "github.com/flycl/flycl"

// ToleranceWithUncertain exposes tolerance to the external tests: the
// bound and, per sample, how many coordinates top-k may keep differently.
func ToleranceWithUncertain(s *flycl.Snapshot, x, dx []float32) ([]float64, []int, error) {
	tol, u, _, err := tolerance(s, x, dx, false)
	return tol, u, err
}
