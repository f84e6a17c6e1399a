package enginebench

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// A miniature run checks the harness end to end (timings are not asserted).
func TestRunSmall(t *testing.T) {
	sc := Scale{Name: "tiny", Tasks: 2, SamplesPerTask: 60, ClassesPerTask: 3, Dim: 16}
	cfg := flycl.Config{M: 200, P: 4, K: 60, Lambdas: []float64{1e-2, 1, 100}}
	res, err := Run(context.Background(), sc, cfg, 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != 2 || len(res.TauPost) != 2 || res.Floor <= 0 {
		t.Fatalf("%+v", res)
	}
	var b bytes.Buffer
	res.Report(&b)
	if !strings.Contains(b.String(), "| mean |") || !strings.Contains(b.String(), "BLAS floor") ||
		!strings.Contains(b.String(), "| task | projection | top-k | G update | GCV | factor | solve |") {
		t.Errorf("report:\n%s", b.String())
	}
}
