package watch

import (
	"testing"

	"github.com/flycl/flycl/vision/transform"
)

// TestShortSideFor: a frame scaled to ShortSideFor loses nothing the
// transform keeps: its shorter side is at least the transform's crop,
// and the scaling is the transform's own resize when it has one.
func TestShortSideFor(t *testing.T) {
	cases := []struct {
		p    transform.Preset
		want int
	}{
		{transform.Preset{Resize: 256, Crop: 224}, 256},
		{transform.Preset{Crop: 32}, 32},
		{transform.Preset{}, 0},
	}
	for _, p := range transform.Presets {
		want := p.Resize
		if want <= 0 {
			want = p.Crop
		}
		cases = append(cases, struct {
			p    transform.Preset
			want int
		}{p, want})
	}
	for _, tc := range cases {
		got := ShortSideFor(tc.p)
		if got != tc.want || (got > 0 && got < tc.p.Crop) {
			t.Errorf("%s (resize %d, crop %d): %d, want %d", tc.p.Name, tc.p.Resize, tc.p.Crop, got, tc.want)
		}
	}
}
