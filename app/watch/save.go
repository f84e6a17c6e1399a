package watch

import (
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"path/filepath"
	"regexp"

	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/vision/imageio"
)

// Saver keeps frames whose predictions are doubtful (unknown, or a
// calibrated probability below a bound) as JPEG files in a folder, for
// someone to label and teach later. It saves at most Max files, and at
// most one frame in every Every frames, so a long doubtful scene does not
// fill the disk.
type Saver struct {
	Dir string
	// Below: a frame whose calibrated probability is below it is doubtful
	// (0: only unknown frames are).
	Below float64
	Max   int // files at most (≤ 0: 1000)
	Every int // frames between two saved ones at least (≤ 0: 1)
	saved int
	last  int
	any   bool
}

// Doubtful reports whether p is a prediction the Saver keeps.
func (s *Saver) Doubtful(p Prediction) bool {
	return p.Unknown || (s.Below > 0 && p.Probability != nil && *p.Probability < s.Below)
}

// Saved returns how many frames it has saved.
func (s *Saver) Saved() int { return s.saved }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Maybe saves frame img when p is doubtful and the bounds allow; it
// returns the file written ("" if none).
func (s *Saver) Maybe(frame int, img *imageio.RGB, p Prediction) (string, error) {
	maxFiles := s.Max
	if maxFiles <= 0 {
		maxFiles = 1000
	}
	if !s.Doubtful(p) || s.saved >= maxFiles || (s.any && frame-s.last < max(s.Every, 1)) {
		return "", nil
	}
	name := fmt.Sprintf("frame-%09d-%s.jpg", frame, unsafeName.ReplaceAllString(p.Answer, "_"))
	path := filepath.Join(s.Dir, name)
	if err := saveJPEG(path, img); err != nil {
		return "", fmt.Errorf("watch: save doubtful frame: %w", err)
	}
	s.saved, s.last, s.any = s.saved+1, frame, true
	return path, nil
}

// saveJPEG writes img to path as a JPEG file (quality 95), atomically: a
// reader sees the whole file or none.
func saveJPEG(path string, img *imageio.RGB) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error {
		return jpeg.Encode(w, toImage(img), &jpeg.Options{Quality: 95})
	})
}

func toImage(img *imageio.RGB) image.Image {
	out := image.NewRGBA(image.Rect(0, 0, img.W, img.H))
	for i, j := 0, 0; i < len(img.Pix); i, j = i+3, j+4 {
		out.Pix[j], out.Pix[j+1], out.Pix[j+2], out.Pix[j+3] = img.Pix[i], img.Pix[i+1], img.Pix[i+2], 255
	}
	return out
}
