package watch

import (
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flycl/flycl/vision/imageio"
)

// ErrZone is wrapped by the errors of a zone that is malformed or does
// not fit in the frame.
var ErrZone = errors.New("watch: bad zone")

// Zone is a named rectangle of the frame, classified on its own.
//
// In pixels (Fraction false) X, Y is the top-left corner and W, H the
// size, all whole numbers. In fractions of the frame (Fraction true) all
// four lie in [0, 1] and X+W, Y+H at most 1; they are turned into pixels
// of each frame by rounding the corners to the nearest pixel.
type Zone struct {
	Name       string
	X, Y, W, H float64
	Fraction   bool
}

// String returns the zone as ParseZone reads it.
func (z Zone) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	if z.Fraction {
		f = func(v float64) string {
			s := strconv.FormatFloat(v, 'f', -1, 64)
			if !strings.Contains(s, ".") {
				s += ".0"
			}
			return s
		}
	}
	return z.Name + "=" + f(z.X) + "," + f(z.Y) + "," + f(z.W) + "," + f(z.H)
}

// ValidZoneName reports whether name can name a zone: 1 to 64 of
// [A-Za-z0-9_-] (it becomes an MQTT topic level and a folder name).
func ValidZoneName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// ParseZone reads NAME=X,Y,W,H. The zone is in fractions of the frame
// when any of the four numbers is written with a decimal point (then all
// four must lie in [0, 1], with X+W ≤ 1 and Y+H ≤ 1), and in pixels
// otherwise (whole numbers, X, Y ≥ 0, W, H ≥ 1): "0,0,0.5,1" is the left
// half, "0,0,320,240" the top-left 320×240 pixels.
func ParseZone(s string) (Zone, error) {
	name, spec, ok := strings.Cut(s, "=")
	if !ok {
		return Zone{}, fmt.Errorf("%w %q: want NAME=X,Y,W,H", ErrZone, s)
	}
	if !ValidZoneName(name) {
		return Zone{}, fmt.Errorf("%w %q: the name %q must be 1 to 64 of A-Z a-z 0-9 _ -", ErrZone, s, name)
	}
	parts := strings.Split(spec, ",")
	if len(parts) != 4 {
		return Zone{}, fmt.Errorf("%w %q: want four numbers X,Y,W,H, got %d", ErrZone, name, len(parts))
	}
	z := Zone{Name: name}
	for _, p := range parts {
		if strings.ContainsAny(p, ".eE") {
			z.Fraction = true
		}
	}
	var v [4]float64
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if z.Fraction {
			f, err := strconv.ParseFloat(p, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
				return Zone{}, fmt.Errorf("%w %q: %q is not a fraction in [0, 1] (a zone with a decimal point is in fractions of the frame)", ErrZone, name, p)
			}
			v[i] = f
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Zone{}, fmt.Errorf("%w %q: %q is not a whole number of pixels ≥ 0", ErrZone, name, p)
		}
		v[i] = float64(n)
	}
	z.X, z.Y, z.W, z.H = v[0], v[1], v[2], v[3]
	if z.W <= 0 || z.H <= 0 {
		return Zone{}, fmt.Errorf("%w %q: its width and height must be positive", ErrZone, name)
	}
	if z.Fraction && (z.X+z.W > 1+1e-9 || z.Y+z.H > 1+1e-9) {
		return Zone{}, fmt.Errorf("%w %q: X+W and Y+H must be at most 1 (the frame's right and bottom edges)", ErrZone, name)
	}
	return z, nil
}

// ParseZones reads several zones and checks that their names differ.
func ParseZones(specs []string) ([]Zone, error) {
	zs := make([]Zone, 0, len(specs))
	seen := map[string]bool{}
	for _, s := range specs {
		z, err := ParseZone(s)
		if err != nil {
			return nil, err
		}
		if seen[z.Name] {
			return nil, fmt.Errorf("%w %q: two zones have this name", ErrZone, z.Name)
		}
		seen[z.Name] = true
		zs = append(zs, z)
	}
	return zs, nil
}

// Rect returns the zone's pixels in a w×h frame, or an error naming the
// zone when it does not fit in the frame or covers no pixel.
func (z Zone) Rect(w, h int) (image.Rectangle, error) {
	var r image.Rectangle
	if z.Fraction {
		r = image.Rect(int(math.Round(z.X*float64(w))), int(math.Round(z.Y*float64(h))),
			min(int(math.Round((z.X+z.W)*float64(w))), w), min(int(math.Round((z.Y+z.H)*float64(h))), h))
		if r.Empty() {
			return image.Rectangle{}, fmt.Errorf("%w %q: %s covers no pixel of a %d×%d frame", ErrZone, z.Name, z, w, h)
		}
		return r, nil
	}
	if z.X+z.W > float64(w) || z.Y+z.H > float64(h) {
		return image.Rectangle{}, fmt.Errorf("%w %q: %s reaches outside the %d×%d frame", ErrZone, z.Name, z, w, h)
	}
	return image.Rect(int(z.X), int(z.Y), int(z.X+z.W), int(z.Y+z.H)), nil
}

// Crop copies r of src into dst (reusing its pixels when large enough)
// and returns it. r must lie inside src.
func Crop(dst, src *imageio.RGB, r image.Rectangle) *imageio.RGB {
	if dst == nil {
		dst = &imageio.RGB{}
	}
	w, h := r.Dx(), r.Dy()
	n := 3 * w * h
	if cap(dst.Pix) < n {
		dst.Pix = make([]uint8, n)
	}
	dst.Pix, dst.W, dst.H = dst.Pix[:n], w, h
	for y := range h {
		s := 3 * ((r.Min.Y+y)*src.W + r.Min.X)
		copy(dst.Pix[3*w*y:3*w*(y+1)], src.Pix[s:s+3*w])
	}
	return dst
}

// checkZoneClassify checks that Config.ZoneClassify names zones of
// Config.Zones, each with a classifier.
func (c *Config) checkZoneClassify() error {
	for name, cl := range c.ZoneClassify {
		if !slices.ContainsFunc(c.Zones, func(z Zone) bool { return z.Name == name }) {
			return fmt.Errorf("%w %q: it has its own classifier but is not one of the zones", ErrZone, name)
		}
		if cl == nil {
			return fmt.Errorf("%w %q: its own classifier is nil", ErrZone, name)
		}
	}
	return nil
}
