package flycl

import "testing"

func BenchmarkDualLearn3000x100(b *testing.B) {
	nPre, benchM = 5, 3000
	defer func() { nPre, benchM = 5, 10000 }()
	BenchmarkDualLearn(b)
}
