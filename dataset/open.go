package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flycl/flycl/imageio"
)

// Kinds lists the data set kinds Open accepts.
var Kinds = []string{"cifar10", "cifar100", "cub", "folder", "mnist", "fashion-mnist"}

// Open opens the split ("train" or "test") of a data set given as
// "kind:path":
//
//	cifar10:PATH, cifar100:PATH  official python or binary release (.tar.gz or directory)
//	cub:PATH                     CUB-200-2011 (official release or PILOT train/test layout)
//	folder:PATH                  PATH/<split>/<class>/<image>: a directory or a tar(.gz);
//	                             VTAB-50, ImageNet-R and ImageNet-A in the PILOT layout
//	mnist:DIR, fashion-mnist:DIR IDX files (gzipped or not), as RGB images
func Open(spec, split string) (Dataset, error) {
	kind, p, ok := strings.Cut(spec, ":")
	if !ok || p == "" {
		return nil, fmt.Errorf("dataset %q: want kind:path with kind one of %s", spec, strings.Join(Kinds, ", "))
	}
	switch kind {
	case "cifar10":
		return OpenCIFAR(CIFAR10, p, split)
	case "cifar100":
		return OpenCIFAR(CIFAR100, p, split)
	case "cub":
		return OpenCUB(p, split)
	case "folder":
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return OpenFolder(filepath.Join(p, split))
		}
		return OpenTarFolder(p, split)
	case "mnist", "fashion-mnist":
		px, err := LoadMNIST(p, split)
		if err != nil {
			return nil, err
		}
		return pixelsDataset(px, p, split), nil
	}
	return nil, fmt.Errorf("dataset %q: unknown kind %q (want one of %s)", spec, kind, strings.Join(Kinds, ", "))
}

// pixelsDataset exposes grey-scale pixels as RGB images (replicated, as
// PIL's convert("RGB") does).
func pixelsDataset(p *Pixels, dir, split string) Dataset {
	side := 1
	for side*side < p.D {
		side++
	}
	m := &memory{name: dir, labels: p.Labels}
	for c := 0; c < 10; c++ {
		m.classes = append(m.classes, fmt.Sprint(c))
	}
	for i := 0; i < p.N; i++ {
		img := imageio.NewRGB(side, side)
		for j, v := range p.X[i*p.D : (i+1)*p.D] {
			b := uint8(v*255 + 0.5)
			img.Pix[3*j], img.Pix[3*j+1], img.Pix[3*j+2] = b, b, b
		}
		m.raw = append(m.raw, img)
		m.paths = append(m.paths, fmt.Sprintf("%s/%s#%d", dir, split, i))
	}
	return m
}
