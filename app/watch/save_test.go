package watch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl/vision/imageio"
)

// TestSaver: only doubtful frames are saved (unknown, or a probability
// below the bound), at most Max of them and one in every Every frames;
// a saved file decodes to the frame (JPEG: within its quantisation error
// on a flat colour).
func TestSaver(t *testing.T) {
	dir := t.TempDir()
	s := &Saver{Dir: dir, Below: 0.5, Max: 3, Every: 2}
	img := solid(16, 16, [3]float64{200, 100, 50})
	low, high := 0.3, 0.9
	var saved []string
	for frame, p := range []Prediction{
		{Answer: "cat", Probability: &high},    // 0 sure: not saved
		{Answer: UnknownAnswer, Unknown: true}, // 1 saved
		{Answer: UnknownAnswer, Unknown: true}, // 2 too soon after 1
		{Answer: "dog", Probability: &low},     // 3 saved
		{Answer: "dog"},                        // 4 no probability, not unknown
		{Answer: "a/b", Probability: &low},     // 5 saved (name made safe)
		{Answer: UnknownAnswer, Unknown: true}, // 6 beyond Max
	} {
		path, err := s.Maybe(frame, img, p)
		if err != nil {
			t.Fatal(err)
		}
		if path != "" {
			saved = append(saved, filepath.Base(path))
		}
	}
	want := []string{"frame-000000001-unknown.jpg", "frame-000000003-dog.jpg", "frame-000000005-a_b.jpg"}
	if len(saved) != len(want) || s.Saved() != 3 {
		t.Fatalf("saved %v, want %v", saved, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Fatalf("%d files in the folder, want 3", len(entries))
	}
	for i, name := range want {
		if saved[i] != name {
			t.Fatalf("saved %v, want %v", saved, want)
		}
		back, err := imageio.DecodeFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if back.W != 16 || back.H != 16 {
			t.Fatalf("%s is %d×%d", name, back.W, back.H)
		}
		for j, v := range back.Pix {
			if d := int(v) - int(img.Pix[j]); d < -3 || d > 3 {
				t.Fatalf("%s: byte %d is %d, the frame's %d", name, j, v, img.Pix[j])
			}
		}
	}
}
