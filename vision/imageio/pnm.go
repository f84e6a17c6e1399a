package imageio

import (
	"fmt"
	"strconv"
)

// pnmHeader parses the header of a binary PGM (P5) or PPM (P6) file as
// PIL's PpmImagePlugin does (whitespace-separated tokens, # comments to
// the end of the line), returning the channels, size and data offset.
func pnmHeader(b []byte) (channels, w, h, off int, err error) {
	channels = map[string]int{"P5": 1, "P6": 3}[string(b[:2])]
	if channels == 0 {
		return 0, 0, 0, 0, fmt.Errorf("%w: only binary PGM (P5) and PPM (P6) are read, not %q", ErrFormat, b[:2])
	}
	i := 2
	var v [3]int
	for k := range v {
		for i < len(b) {
			if b[i] == '#' {
				for i < len(b) && b[i] != '\r' && b[i] != '\n' {
					i++
				}
			} else if isSpace(b[i]) {
				i++
			} else {
				break
			}
		}
		j := i
		for j < len(b) && !isSpace(b[j]) && b[j] != '#' && j-i <= 10 {
			j++
		}
		n, err := strconv.Atoi(string(b[i:j]))
		if err != nil || n <= 0 {
			return 0, 0, 0, 0, fmt.Errorf("bad header value %q", b[i:j])
		}
		v[k], i = n, j
	}
	if v[2] != 255 {
		return 0, 0, 0, 0, fmt.Errorf("maxval %d, only 255 is read (PIL scales other values)", v[2])
	}
	if i >= len(b) || !isSpace(b[i]) {
		return 0, 0, 0, 0, fmt.Errorf("truncated header")
	}
	return channels, v[0], v[1], i + 1, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// decodePNM decodes binary PGM/PPM with maxval 255: the samples are the
// pixels, as PIL reads them.
func decodePNM(b []byte, d Decoder) (*RGB, error) {
	ch, w, h, off, err := pnmHeader(b)
	if err != nil {
		return nil, fmt.Errorf("pnm: %w", err)
	}
	if err := d.check(w, h); err != nil {
		return nil, fmt.Errorf("pnm: %w", err)
	}
	// compared by division: with no pixel limit, ch*w*h may overflow
	if avail := len(b) - off; h > avail || w > avail/ch/h {
		return nil, fmt.Errorf("pnm: truncated: %d×%d×%d bytes of data announced, the file has %d", w, h, ch, avail)
	}
	out := NewRGB(w, h)
	data := b[off:]
	if ch == 3 {
		copy(out.Pix, data[:3*w*h])
		return out, nil
	}
	for i := 0; i < w*h; i++ {
		out.Pix[3*i], out.Pix[3*i+1], out.Pix[3*i+2] = data[i], data[i], data[i]
	}
	return out, nil
}
