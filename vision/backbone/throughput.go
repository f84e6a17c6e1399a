package backbone

import "time"

// Throughput runs batches of n constant images through s for at least d
// (after one warm-up batch) and returns images per second.
func Throughput(s *Session, n int, d time.Duration) (float64, error) {
	x := make([]float32, n*3*s.model.Size*s.model.Size)
	for i := range x {
		x[i] = float32(i%255)/255 - 0.5
	}
	if _, err := s.Run(x, n); err != nil {
		return 0, err
	}
	start, images := time.Now(), 0
	for time.Since(start) < d {
		if _, err := s.Run(x, n); err != nil {
			return 0, err
		}
		images += n
	}
	return float64(images) / time.Since(start).Seconds(), nil
}
