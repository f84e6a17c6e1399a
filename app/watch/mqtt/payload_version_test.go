package mqtt

import (
	"testing"

	"github.com/flycl/flycl/app/watch"
)

// TestAttributesModelVersion: the attributes name the version of the
// model that answered (it changes when flycl watch picks up a new one),
// and the publisher's configured version when the prediction names none.
func TestAttributesModelVersion(t *testing.T) {
	for _, c := range []struct {
		pred, configured, want uint64
	}{{0, 7, 7}, {9, 7, 9}} {
		u := watch.Update{Event: watch.Event{Class: "car"}, Prediction: watch.Prediction{Answer: "car", ModelVersion: c.pred}}
		if got := Attributes(u, c.configured).ModelVersion; got != c.want {
			t.Errorf("prediction's version %d, configured %d: attributes say %d, want %d", c.pred, c.configured, got, c.want)
		}
	}
}
