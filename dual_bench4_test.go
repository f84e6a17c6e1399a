package flycl

import "testing"

// BenchmarkDualLearn180: BenchmarkDualLearn into a model holding 180
// samples (18 classes), where bench serve-learn's learns end.
func BenchmarkDualLearn180(b *testing.B) {
	nPre = 9
	defer func() { nPre = 5 }()
	BenchmarkDualLearn(b)
}
