package locate

import (
	"strings"
	"testing"

	"github.com/flycl/flycl/app/fetch"
	"github.com/flycl/flycl/vision/dataset"
)

// TestDataHint: every data set kind has a hint of its own; a kind the
// catalogue can download names the fetch that does.
func TestDataHint(t *testing.T) {
	fallback := DataHint("no such kind")
	for _, k := range dataset.Kinds {
		h := DataHint(k)
		if h == fallback {
			t.Errorf("%s: the generic hint", k)
		}
		if _, err := fetch.Lookup(k); err == nil && !strings.Contains(h, "flycl-lab fetch "+k) {
			t.Errorf("%s: fetch has it, the hint does not say so: %q", k, h)
		}
	}
}
