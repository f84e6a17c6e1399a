package sweep

import (
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/lab/report"
)

func TestWith(t *testing.T) {
	base := flycl.Config{M: 1000, P: 30, K: 300}
	for _, tc := range []struct {
		param   string
		v       int
		m, p, k int
		err     bool
	}{
		{"m", 2000, 2000, 30, 300, false},
		{"m", 200, 200, 30, 200, false}, // k lowered to the swept m
		{"p", 10, 1000, 10, 300, false},
		{"k", 1000, 1000, 30, 1000, false},
		{"k", 1001, 0, 0, 0, true},
		{"k", 0, 0, 0, 0, true},
		{"q", 5, 0, 0, 0, true},
	} {
		c, err := With(base, tc.param, tc.v)
		if tc.err {
			if err == nil {
				t.Errorf("%s=%d: no error", tc.param, tc.v)
			}
			continue
		}
		if err != nil || c.M != tc.m || c.P != tc.p || c.K != tc.k {
			t.Errorf("%s=%d: m=%d p=%d k=%d err=%v, want m=%d p=%d k=%d", tc.param, tc.v, c.M, c.P, c.K, err, tc.m, tc.p, tc.k)
		}
	}
}

// TestTable: one column per hyper-parameter (none repeated), one row per value.
func TestTable(t *testing.T) {
	pts := []Point{
		{Value: 100, Config: flycl.Config{M: 100, P: 3, K: 100}, Summary: report.Summary{}},
		{Value: 500, Config: flycl.Config{M: 500, P: 3, K: 300}, Summary: report.Summary{}},
	}
	var b strings.Builder
	if err := Table(&b, "m", "blobs", pts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[2], "| m | p | k | Ā (%) |") {
		t.Errorf("header %q", lines[2])
	}
	if !strings.HasPrefix(lines[4], "| 100 | 3 | 100 |") || !strings.HasPrefix(lines[5], "| 500 | 3 | 300 |") {
		t.Errorf("rows:\n%s", b.String())
	}
	b.Reset()
	if err := Table(&b, "k", "blobs", pts); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(b.String(), "\n"); !strings.HasPrefix(lines[2], "| k | m | p | Ā (%) |") || !strings.HasPrefix(lines[5], "| 300 | 500 | 3 |") {
		t.Errorf("k sweep:\n%s", b.String())
	}
}
