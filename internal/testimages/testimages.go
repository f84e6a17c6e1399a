package testimages

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Patterns are the patterns Draw knows: red discs on cream, blue and
// white stripes, a green and black checkerboard, yellow rings on purple.
var Patterns = []string{"discs", "stripes", "checks", "rings"}

// ForClass is the pattern drawn in place of the photos of a class of the
// shared data sets (CIFAR-10, the ImageNet sample) that tests name; the
// classes any one test uses get different patterns.
var ForClass = map[string]string{
	"airplane": "stripes", "frog": "checks", "ship": "discs", "bird": "rings", "cat": "checks",
	"tench": "discs", "magpie": "stripes", "banana": "checks", "volcano": "rings",
}

// Draw draws one size×size picture of pattern, its layout (positions,
// sizes, angle, period, phase) drawn from r and every channel of every
// pixel jittered by up to ±20 levels.
func Draw(pattern string, size int, r *rand.Rand) (*image.NRGBA, error) {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	jit := func(v uint8) uint8 { return uint8(min(255, max(0, int(v)+r.IntN(41)-20))) }
	set := func(x, y int, c color.NRGBA) { img.SetNRGBA(x, y, color.NRGBA{jit(c.R), jit(c.G), jit(c.B), 255}) }
	s := float64(size)
	switch pattern {
	case "discs": // red discs on cream
		type disc struct{ x, y, r float64 }
		var ds []disc
		for range 2 + r.IntN(3) {
			ds = append(ds, disc{s * (0.2 + 0.6*r.Float64()), s * (0.2 + 0.6*r.Float64()), s * (0.1 + 0.12*r.Float64())})
		}
		for y := range size {
			for x := range size {
				c := color.NRGBA{240, 230, 200, 255}
				for _, d := range ds {
					if math.Hypot(float64(x)-d.x, float64(y)-d.y) < d.r {
						c = color.NRGBA{200, 30, 30, 255}
					}
				}
				set(x, y, c)
			}
		}
	case "stripes": // blue and white, a random angle and period
		a := r.Float64() * math.Pi
		per := s * (0.08 + 0.06*r.Float64())
		ph := r.Float64() * per
		for y := range size {
			for x := range size {
				c := color.NRGBA{250, 250, 250, 255}
				if math.Mod(float64(x)*math.Cos(a)+float64(y)*math.Sin(a)+ph+4*s, per) < per/2 {
					c = color.NRGBA{20, 40, 180, 255}
				}
				set(x, y, c)
			}
		}
	case "checks": // green and black squares
		cell := size/8 + r.IntN(size/8)
		ox, oy := r.IntN(cell), r.IntN(cell)
		for y := range size {
			for x := range size {
				c := color.NRGBA{10, 10, 10, 255}
				if ((x+ox)/cell+(y+oy)/cell)%2 == 0 {
					c = color.NRGBA{40, 200, 60, 255}
				}
				set(x, y, c)
			}
		}
	case "rings": // yellow rings on purple, a random centre and period
		cx, cy := s*(0.3+0.4*r.Float64()), s*(0.3+0.4*r.Float64())
		per := s * (0.1 + 0.05*r.Float64())
		for y := range size {
			for x := range size {
				c := color.NRGBA{90, 20, 110, 255}
				if math.Mod(math.Hypot(float64(x)-cx, float64(y)-cy), per) < per/2 {
					c = color.NRGBA{240, 210, 40, 255}
				}
				set(x, y, c)
			}
		}
	default:
		return nil, fmt.Errorf("testimages: no pattern %q (want one of %v)", pattern, Patterns)
	}
	return img, nil
}

// Encode encodes img as PNG (ext "png") or as JPEG at quality 90.
func Encode(img image.Image, ext string) ([]byte, error) {
	var b bytes.Buffer
	var err error
	if ext == "png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
	}
	return b.Bytes(), err
}

// WriteFolder writes an image folder: per pictures of each pattern of
// classes (Draw at size with r, class by class), encoded as ext ("png" or
// "jpg": Encode) to dir/<pattern>/NN.ext. It returns the files' paths
// relative to dir, slash-separated, in the order written.
func WriteFolder(dir string, classes []string, per, size int, ext string, r *rand.Rand) ([]string, error) {
	var names []string
	for _, class := range classes {
		if err := os.MkdirAll(filepath.Join(dir, class), 0o755); err != nil {
			return nil, err
		}
		for i := range per {
			img, err := Draw(class, size, r)
			if err != nil {
				return nil, err
			}
			b, err := Encode(img, ext)
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf("%s/%02d.%s", class, i, ext)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), b, 0o644); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
	}
	return names, nil
}
