package transform

import (
	"fmt"
	"math"

	"github.com/flycl/flycl/vision/imageio"
)

// Filter is a resampling filter.
type Filter int

const (
	Bilinear Filter = iota // PIL.Image.BILINEAR (triangle, support 1)
	Bicubic                // PIL.Image.BICUBIC (Keys, a = -0.5, support 2)
)

func (f Filter) String() string {
	if f == Bicubic {
		return "bicubic"
	}
	return "bilinear"
}

// ParseFilter parses "bilinear" or "bicubic".
func ParseFilter(s string) (Filter, error) {
	switch s {
	case "bilinear":
		return Bilinear, nil
	case "bicubic":
		return Bicubic, nil
	}
	return Bilinear, fmt.Errorf("transform: unknown filter %q (want bilinear or bicubic)", s)
}

func (f Filter) support() float64 {
	if f == Bicubic {
		return 2
	}
	return 1
}

func (f Filter) eval(x float64) float64 {
	if x < 0 {
		x = -x
	}
	if f == Bicubic {
		const a = -0.5
		if x < 1 {
			return ((a+2)*x-(a+3))*x*x + 1
		}
		if x < 2 {
			return (((x-5)*x+8)*x - 4) * a
		}
		return 0
	}
	if x < 1 {
		return 1 - x
	}
	return 0
}

// precisionBits is Pillow's fixed-point precision for 8-bit images.
const precisionBits = 32 - 8 - 2

// coeffs is Pillow's precompute_coeffs followed by normalize_coeffs_8bpc:
// for each output index, the first input index, the tap count and the
// fixed-point weights.
func coeffs(inSize, outSize int, f Filter) (bounds []int, k []int32, ksize int) {
	scale := float64(inSize) / float64(outSize)
	filterscale := math.Max(scale, 1)
	support := f.support() * filterscale
	ksize = int(math.Ceil(support))*2 + 1
	bounds = make([]int, 2*outSize)
	kk := make([]float64, outSize*ksize)
	for xx := 0; xx < outSize; xx++ {
		center := (float64(xx) + 0.5) * scale
		ss := 1 / filterscale
		xmin := int(center - support + 0.5) // C cast truncates toward zero
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > inSize {
			xmax = inSize
		}
		xmax -= xmin
		row := kk[xx*ksize : (xx+1)*ksize]
		var ww float64
		for x := 0; x < xmax; x++ {
			w := f.eval((float64(x+xmin) - center + 0.5) * ss)
			row[x] = w
			ww += w
		}
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				row[x] /= ww
			}
		}
		bounds[2*xx], bounds[2*xx+1] = xmin, xmax
	}
	k = make([]int32, len(kk))
	for i, v := range kk {
		if v < 0 {
			k[i] = int32(-0.5 + v*(1<<precisionBits))
		} else {
			k[i] = int32(0.5 + v*(1<<precisionBits))
		}
	}
	return bounds, k, ksize
}

func clip8(v int32) uint8 {
	if v >= 1<<precisionBits<<8 {
		return 255
	}
	if v <= 0 {
		return 0
	}
	return uint8(v >> precisionBits)
}

// Resize returns src resized to w×h with Pillow's algorithm: a horizontal
// pass over the rows the vertical pass needs, then a vertical pass, each
// skipped when that dimension does not change.
func Resize(src *imageio.RGB, w, h int, f Filter) *imageio.RGB {
	if w <= 0 || h <= 0 {
		panic(fmt.Sprintf("transform.Resize: bad size %d×%d", w, h))
	}
	if w == src.W && h == src.H {
		return &imageio.RGB{W: w, H: h, Pix: append([]uint8(nil), src.Pix...)}
	}
	boundsV, kV, ksV := coeffs(src.H, h, f)
	cur := src
	if w != src.W {
		boundsH, kH, ksH := coeffs(src.W, w, f)
		first := 0
		last := src.H
		if h != src.H {
			first = boundsV[0]
			last = boundsV[2*h-2] + boundsV[2*h-1]
			for i := 0; i < h; i++ {
				boundsV[2*i] -= first
			}
		}
		tmp := imageio.NewRGB(w, last-first)
		for yy := 0; yy < tmp.H; yy++ {
			in := src.Pix[3*(yy+first)*src.W:]
			out := tmp.Pix[3*yy*w:]
			for xx := 0; xx < w; xx++ {
				xmin, xmax := boundsH[2*xx], boundsH[2*xx+1]
				k := kH[xx*ksH : xx*ksH+xmax]
				s0, s1, s2 := int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1))
				p := in[3*xmin:]
				for x, kx := range k {
					s0 += int32(p[3*x]) * kx
					s1 += int32(p[3*x+1]) * kx
					s2 += int32(p[3*x+2]) * kx
				}
				out[3*xx], out[3*xx+1], out[3*xx+2] = clip8(s0), clip8(s1), clip8(s2)
			}
		}
		cur = tmp
	}
	if h == cur.H && h == src.H {
		return cur
	}
	out := imageio.NewRGB(w, h)
	for yy := 0; yy < h; yy++ {
		ymin, ymax := boundsV[2*yy], boundsV[2*yy+1]
		k := kV[yy*ksV : yy*ksV+ymax]
		o := out.Pix[3*yy*w : 3*(yy+1)*w]
		for xx := 0; xx < 3*w; xx++ {
			s := int32(1 << (precisionBits - 1))
			for y, ky := range k {
				s += int32(cur.Pix[3*(y+ymin)*w+xx]) * ky
			}
			o[xx] = clip8(s)
		}
	}
	return out
}
