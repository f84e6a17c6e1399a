package transform

import (
	"math"

	"github.com/flycl/flycl/vision/imageio"
)

// Preprocessor computes a preset's tensor (Preset.Tensor) with reusable
// buffers and cached resampling coefficients, the same value for value:
// Pillow's two-pass fixed-point resampling, computed only for the rows
// and columns the centre crop keeps (each output pixel depends only on its
// own coefficients, so skipping the others changes nothing), with the
// vertical pass, the crop and the normalisation fused into one loop and
// the normalisation a per-channel lookup table of the float32 values
// ToTensor computes. A Preprocessor is not safe for concurrent use: give
// each goroutine its own.
type Preprocessor struct {
	p     Preset
	lut   [3][256]float32
	w, h  int // source size of the cached plan
	valid bool
	pl    plan
	tmp   []uint8 // horizontal pass output
	acc   []int32 // vertical pass accumulators, one crop row
}

// plan is the work for one source size: the crop window within the
// resized image and the coefficients of the output rows/columns it keeps.
type plan struct {
	pad        bool // the resized image is smaller than the crop: generic path
	hpass      bool // horizontal pass (width changes)
	vpass      bool // vertical pass (height changes)
	top, left  int  // crop offsets in the resized image
	first, end int  // source rows the horizontal pass computes
	hb         []int
	hk         []int32
	hks        int
	vb         []int
	vk         []int32
	vks        int
}

// NewPreprocessor returns a Preprocessor for p.
func (p Preset) NewPreprocessor() *Preprocessor {
	q := &Preprocessor{p: p}
	for c := 0; c < 3; c++ {
		m, s := p.Mean[c], p.Std[c]
		for v := 0; v < 256; v++ {
			x := float32(v) / 255
			q.lut[c][v] = (x - m) / s
		}
	}
	return q
}

func (q *Preprocessor) plan(W, H int) *plan {
	if q.valid && q.w == W && q.h == H {
		return &q.pl
	}
	q.w, q.h, q.valid = W, H, true
	crop := q.p.Crop
	rw, rh := ShorterSide(W, H, q.p.Resize)
	pl := plan{}
	if rw < crop || rh < crop {
		pl.pad = true
		q.pl = pl
		return &q.pl
	}
	pl.top = int(math.RoundToEven(float64(rh-crop) / 2))
	pl.left = int(math.RoundToEven(float64(rw-crop) / 2))
	pl.hpass, pl.vpass = rw != W, rh != H
	if pl.vpass {
		b, k, ks := coeffs(H, rh, q.p.Filter)
		pl.vb, pl.vk, pl.vks = b[2*pl.top:2*(pl.top+crop)], k[pl.top*ks:(pl.top+crop)*ks], ks
		trimZeros(pl.vb, pl.vk, ks)
	}
	if pl.hpass {
		b, k, ks := coeffs(W, rw, q.p.Filter)
		pl.hb, pl.hk, pl.hks = b[2*pl.left:2*(pl.left+crop)], k[pl.left*ks:(pl.left+crop)*ks], ks
		trimZeros(pl.hb, pl.hk, ks)
		// source rows the kept output rows read
		if pl.vpass {
			pl.first, pl.end = pl.vb[0], 0
			for i := 0; i < crop; i++ {
				pl.first = min(pl.first, pl.vb[2*i])
				pl.end = max(pl.end, pl.vb[2*i]+pl.vb[2*i+1])
			}
		} else {
			pl.first, pl.end = pl.top, pl.top+crop
		}
	}
	q.pl = pl
	return &q.pl
}

// Tensor writes the preset's normalised 3×Crop×Crop CHW tensor of img into
// dst (allocated when nil or short), equal to Preset.Tensor's.
func (q *Preprocessor) Tensor(img *imageio.RGB, dst []float32) []float32 {
	crop := q.p.Crop
	n := crop * crop
	if len(dst) < 3*n {
		dst = make([]float32, 3*n)
	}
	dst = dst[:3*n]
	pl := q.plan(img.W, img.H)
	if pl.pad {
		return ToTensor(q.p.Apply(img), q.p.Mean, q.p.Std, dst)
	}
	// cur: the image the vertical pass (or the crop) reads, with row stride
	// and the byte offset of the crop's first column
	cur, stride, off, row0 := img.Pix, 3*img.W, 3*pl.left, 0
	if pl.hpass {
		rows := pl.end - pl.first
		if cap(q.tmp) < rows*3*crop {
			q.tmp = make([]uint8, rows*3*crop)
		}
		tmp := q.tmp[:rows*3*crop]
		const half = int32(1 << (precisionBits - 1))
		for r := 0; r < rows; r++ {
			in := img.Pix[3*(r+pl.first)*img.W : 3*(r+pl.first+1)*img.W]
			out := tmp[3*r*crop : 3*(r+1)*crop]
			for x := 0; x < crop; x++ {
				xmin, xn := pl.hb[2*x], pl.hb[2*x+1]
				k := pl.hk[x*pl.hks : x*pl.hks+xn]
				p := in[3*xmin : 3*(xmin+xn)]
				s0, s1, s2 := half, half, half
				for t, kx := range k {
					q := p[3*t : 3*t+3]
					s0 += int32(q[0]) * kx
					s1 += int32(q[1]) * kx
					s2 += int32(q[2]) * kx
				}
				out[3*x], out[3*x+1], out[3*x+2] = clip8(s0), clip8(s1), clip8(s2)
			}
		}
		cur, stride, off, row0 = tmp, 3*crop, 0, pl.first
	}
	r, g, b := dst[:n], dst[n:2*n], dst[2*n:]
	lr, lg, lb := &q.lut[0], &q.lut[1], &q.lut[2]
	if !pl.vpass {
		for y := 0; y < crop; y++ {
			src := cur[(y+pl.top-row0)*stride+off : (y+pl.top-row0)*stride+off+3*crop]
			o := y * crop
			for x := 0; x < crop; x++ {
				r[o+x], g[o+x], b[o+x] = lr[src[3*x]], lg[src[3*x+1]], lb[src[3*x+2]]
			}
		}
		return dst
	}
	const half = int32(1 << (precisionBits - 1))
	for y := 0; y < crop; y++ {
		ymin, yn := pl.vb[2*y]-row0, pl.vb[2*y+1]
		k := pl.vk[y*pl.vks : y*pl.vks+yn]
		o := y * crop
		rr, gg, bb := r[o:o+crop], g[o:o+crop], b[o:o+crop]
		row := func(t int) []uint8 { return cur[(ymin+t)*stride+off : (ymin+t)*stride+off+3*crop] }
		switch len(k) { // the common tap counts, unrolled: one pass, no accumulator array
		case 1:
			s0, k0 := row(0), k[0]
			for x := range rr {
				a := s0[3*x : 3*x+3]
				rr[x] = lr[clip8(half+int32(a[0])*k0)]
				gg[x] = lg[clip8(half+int32(a[1])*k0)]
				bb[x] = lb[clip8(half+int32(a[2])*k0)]
			}
		case 2:
			s0, s1, k0, k1 := row(0), row(1), k[0], k[1]
			for x := range rr {
				a, b := s0[3*x:3*x+3], s1[3*x:3*x+3]
				rr[x] = lr[clip8(half+int32(a[0])*k0+int32(b[0])*k1)]
				gg[x] = lg[clip8(half+int32(a[1])*k0+int32(b[1])*k1)]
				bb[x] = lb[clip8(half+int32(a[2])*k0+int32(b[2])*k1)]
			}
		case 3:
			s0, s1, s2, k0, k1, k2 := row(0), row(1), row(2), k[0], k[1], k[2]
			for x := range rr {
				a, b, c := s0[3*x:3*x+3], s1[3*x:3*x+3], s2[3*x:3*x+3]
				rr[x] = lr[clip8(half+int32(a[0])*k0+int32(b[0])*k1+int32(c[0])*k2)]
				gg[x] = lg[clip8(half+int32(a[1])*k0+int32(b[1])*k1+int32(c[1])*k2)]
				bb[x] = lb[clip8(half+int32(a[2])*k0+int32(b[2])*k1+int32(c[2])*k2)]
			}
		default:
			if cap(q.acc) < 3*crop {
				q.acc = make([]int32, 3*crop)
			}
			acc := q.acc[:3*crop]
			for i := range acc {
				acc[i] = half
			}
			t := 0
			for ; t+1 < len(k); t += 2 { // two taps per sweep: half the accumulator traffic
				s0, s1, k0, k1 := row(t)[:len(acc)], row(t + 1)[:len(acc)], k[t], k[t+1]
				for i, v := range s0 {
					acc[i] += int32(v)*k0 + int32(s1[i])*k1
				}
			}
			if t < len(k) {
				s0, k0 := row(t)[:len(acc)], k[t]
				for i, v := range s0 {
					acc[i] += int32(v) * k0
				}
			}
			for x := range rr {
				a := acc[3*x : 3*x+3]
				rr[x], gg[x], bb[x] = lr[clip8(a[0])], lg[clip8(a[1])], lb[clip8(a[2])]
			}
		}
	}
	return dst
}

// trimZeros drops the zero weights at both ends of each output's taps
// (bounds: first input and count per output; k: ksize weights each).
// A zero weight adds nothing to the fixed-point sum, so the result is
// unchanged; fewer taps make the unrolled loops apply more often.
func trimZeros(bounds []int, k []int32, ksize int) {
	for o := 0; o < len(bounds)/2; o++ {
		w := k[o*ksize : o*ksize+bounds[2*o+1]]
		lead := 0
		for lead < len(w)-1 && w[lead] == 0 {
			lead++
		}
		n := len(w) - lead
		for n > 1 && w[lead+n-1] == 0 {
			n--
		}
		copy(w, w[lead:lead+n])
		bounds[2*o] += lead
		bounds[2*o+1] = n
	}
}
