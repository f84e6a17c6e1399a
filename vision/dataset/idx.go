package dataset

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/flycl/flycl/format/features"
)

// IDX is an array read from an IDX file (the MNIST format).
type IDX struct {
	Dims []int
	Data []uint8
}

// ReadIDX reads an unsigned-byte IDX file (magic 0x0000 08 NN), gzipped or
// not (detected from the content).
func ReadIDX(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(f, path)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("%s: too short for an IDX file", path)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("%s: not an IDX file (magic %x)", path, magic)
	}
	if magic[2] != 0x08 {
		return nil, fmt.Errorf("%s: IDX element type 0x%02x, only unsigned bytes (0x08) are supported", path, magic[2])
	}
	nd := int(magic[3])
	if nd < 1 || nd > 4 {
		return nil, fmt.Errorf("%s: IDX with %d dimensions", path, nd)
	}
	dims := make([]int, nd)
	total := 1
	for i := range dims {
		var v uint32
		if err := binary.Read(r, binary.BigEndian, &v); err != nil {
			return nil, fmt.Errorf("%s: truncated IDX header", path)
		}
		if v == 0 || v > 1<<28 {
			return nil, fmt.Errorf("%s: IDX dimension %d is %d", path, i, v)
		}
		dims[i] = int(v)
		total *= int(v)
		if total > 1<<31 {
			return nil, fmt.Errorf("%s: IDX array too large (%v)", path, dims)
		}
	}
	// Grow with the data rather than trust the header: a 20-byte file may
	// claim 2 GB.
	data, err := io.ReadAll(io.LimitReader(r, int64(total)))
	if errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && len(data) < total) {
		return nil, fmt.Errorf("%s: truncated: the header announces %v = %d bytes, the file holds %d", path, dims, total, len(data))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Read to the end so that gzip checks its trailer (CRC-32 and length).
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, fmt.Errorf("%s: corrupt file: %w", path, err)
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// maybeGunzip returns a buffered reader of f, decompressing it when its
// content starts with the gzip magic.
func maybeGunzip(f io.Reader, path string) (io.Reader, error) {
	br := bufio.NewReaderSize(f, 1<<20)
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: bad gzip stream: %w", path, err)
		}
		return gz, nil
	}
	return br, nil
}

// Grey is a grey-scale image set as stored: one byte per pixel.
type Grey struct {
	Pix        []uint8 // N×Rows×Cols
	N          int
	Rows, Cols int
	Labels     []int
}

// Features returns the images as pixel features in [0,1] (pixel/255), one
// row of Rows×Cols values per image.
func (g *Grey) Features() *features.Set {
	s := &features.Set{X: make([]float32, len(g.Pix)), N: g.N, D: g.Rows * g.Cols, Labels: g.Labels}
	for i, v := range g.Pix {
		s.X[i] = float32(v) / 255
	}
	return s
}

// findIDX looks for name (optionally with .gz) in dir.
func findIDX(dir string, names ...string) (string, error) {
	for _, n := range names {
		for _, suffix := range []string{"", ".gz"} {
			p := filepath.Join(dir, n+suffix)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s: none of %s(.gz) found", dir, strings.Join(names, ", "))
}

// LoadMNIST reads the MNIST or Fashion-MNIST split ("train" or "test")
// from dir as pixel features in [0,1] (see ReadMNIST and Grey.Features).
func LoadMNIST(dir, split string) (*features.Set, error) {
	g, err := ReadMNIST(dir, split)
	if err != nil {
		return nil, err
	}
	return g.Features(), nil
}

// ReadMNIST reads the MNIST or Fashion-MNIST split ("train" or "test")
// from dir, which holds the four IDX files under their usual names
// (train-images-idx3-ubyte, t10k-labels-idx1-ubyte, ... gzipped or not).
func ReadMNIST(dir, split string) (*Grey, error) {
	prefix := map[string]string{"train": "train", "test": "t10k"}[split]
	if prefix == "" {
		return nil, fmt.Errorf("mnist: split %q, want train or test", split)
	}
	ip, err := findIDX(dir, prefix+"-images-idx3-ubyte", prefix+"-images.idx3-ubyte")
	if err != nil {
		return nil, err
	}
	lp, err := findIDX(dir, prefix+"-labels-idx1-ubyte", prefix+"-labels.idx1-ubyte")
	if err != nil {
		return nil, err
	}
	im, err := ReadIDX(ip)
	if err != nil {
		return nil, err
	}
	lb, err := ReadIDX(lp)
	if err != nil {
		return nil, err
	}
	if len(im.Dims) != 3 {
		return nil, fmt.Errorf("%s: images have dimensions %v, want N×rows×cols", ip, im.Dims)
	}
	if len(lb.Dims) != 1 || lb.Dims[0] != im.Dims[0] {
		return nil, fmt.Errorf("%s: %v labels for %d images in %s", lp, lb.Dims, im.Dims[0], ip)
	}
	n := im.Dims[0]
	p := &Grey{Pix: im.Data, N: n, Rows: im.Dims[1], Cols: im.Dims[2], Labels: make([]int, n)}
	for i, v := range lb.Data {
		if v > 9 {
			return nil, fmt.Errorf("%s: label %d of sample %d is not a digit class", lp, v, i)
		}
		p.Labels[i] = int(v)
	}
	return p, nil
}
