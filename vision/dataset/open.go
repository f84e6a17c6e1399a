package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/imageio"
)

// Kinds lists the data set kinds a Spec may name.
var Kinds = []string{"cifar10", "cifar100", "cub", "folder", "mnist", "fashion-mnist"}

// Spec names a data set: its kind and where it is. It is written
// "kind:path" on the command line and parsed once, by ParseSpec:
//
//	cifar10:PATH, cifar100:PATH  official python or binary release (.tar.gz or directory)
//	cub:PATH                     CUB-200-2011 (official release or PILOT train/test layout)
//	folder:PATH                  PATH/<split>/<class>/<image>: a directory or a tar(.gz);
//	                             VTAB-50, ImageNet-R and ImageNet-A in the PILOT layout
//	mnist:DIR, fashion-mnist:DIR IDX files (gzipped or not), as RGB images or pixels
type Spec struct {
	Kind string
	Path string // may be empty after ParseSpec; Open needs it
}

// ParseSpec parses "kind[:path]". The kind must be one of Kinds; the path
// may be left out (for the caller to fill in a default).
func ParseSpec(s string) (Spec, error) {
	kind, p, _ := strings.Cut(s, ":")
	for _, k := range Kinds {
		if k == kind {
			return Spec{Kind: kind, Path: p}, nil
		}
	}
	err := fmt.Errorf("data set %q: unknown kind %q (want kind:path with kind one of %s)", s, kind, strings.Join(Kinds, ", "))
	if !strings.Contains(s, ":") && s != "" {
		// a bare path: most often a folder of photos
		err = fmt.Errorf("%w; for a folder (or .tar) of class folders of images, give folder:%s", err, s)
	}
	return Spec{}, err
}

// String returns "kind:path".
func (s Spec) String() string {
	if s.Path == "" {
		return s.Kind
	}
	return s.Kind + ":" + s.Path
}

// Grey reports whether the data set is grey-scale pixels that can be used
// as features directly (MNIST, Fashion-MNIST).
func (s Spec) Grey() bool { return s.Kind == "mnist" || s.Kind == "fashion-mnist" }

// Open opens the split ("train" or "test") of the data set "kind:path"
// (ParseSpec, then Spec.Open).
func Open(spec, split string) (Dataset, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.Open(split)
}

// Open opens the split ("train" or "test") as images.
func (s Spec) Open(split string) (Dataset, error) {
	if s.Path == "" {
		return nil, fmt.Errorf("data set %s: no path (want %s:PATH)", s.Kind, s.Kind)
	}
	p := s.Path
	switch s.Kind {
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
			sub := filepath.Join(p, split)
			if _, err := os.Stat(sub); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("data set %s: no %s/ sub-folder (folder:DIR reads DIR/%s/<class>/<image>)", s, split, split)
			}
			return OpenFolder(sub)
		}
		return OpenTarFolder(p, split)
	case "mnist", "fashion-mnist":
		g, err := ReadMNIST(p, split)
		if err != nil {
			return nil, err
		}
		return g.images(p, split), nil
	}
	return nil, fmt.Errorf("data set %s: unknown kind %q (want one of %s)", s, s.Kind, strings.Join(Kinds, ", "))
}

// Pixels returns the split of a grey-scale data set (see Grey) as
// features: every pixel divided by 255.
func (s Spec) Pixels(split string) (*features.Set, error) {
	if !s.Grey() {
		return nil, fmt.Errorf("data set %s: only mnist and fashion-mnist can be used as raw pixels (give a backbone)", s)
	}
	if s.Path == "" {
		return nil, fmt.Errorf("data set %s: no path (want %s:DIR)", s.Kind, s.Kind)
	}
	g, err := ReadMNIST(s.Path, split)
	if err != nil {
		return nil, err
	}
	return g.Features(), nil
}

// Key identifies the content of the split for a cache: the kind, the
// split, and a SHA-256 over the data. A file (an archive) is hashed whole,
// so an identical copy anywhere is the same key and any changed byte is
// another. A directory is hashed by every regular file's path relative to
// it (for a folder data set: to its split's folder), size and
// modification time (hashing every image would cost as much
// as reading the data set): a copy that keeps the times is the same key,
// and a replaced, added or removed file changes it.
func (s Spec) Key(split string) (string, error) {
	if s.Path == "" {
		return "", fmt.Errorf("data set %s: no path", s.Kind)
	}
	h := sha256.New()
	root := s.Path
	st, err := os.Stat(root)
	if err != nil {
		return "", err
	}
	if st.IsDir() && s.Kind == "folder" {
		root = filepath.Join(root, split) // the split's images only
	}
	if st.IsDir() {
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			info, err := os.Stat(p) // follows links: the content they point at
			if err != nil {
				return err
			}
			if !info.Mode().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			var b [16]byte
			binary.LittleEndian.PutUint64(b[:8], uint64(info.Size()))
			binary.LittleEndian.PutUint64(b[8:], uint64(info.ModTime().UnixNano()))
			io.WriteString(h, filepath.ToSlash(rel))
			h.Write([]byte{0})
			h.Write(b[:])
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("data set key of %s: %w", s.Path, err)
		}
	} else {
		f, err := os.Open(s.Path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return "", fmt.Errorf("data set key of %s: %w", s.Path, err)
		}
	}
	return fmt.Sprintf("%s|%s|%s", s.Kind, split, hex.EncodeToString(h.Sum(nil))), nil
}

// images exposes grey-scale pixels as RGB images (replicated, as PIL's
// convert("RGB") does), straight from the stored bytes.
func (g *Grey) images(dir, split string) Dataset {
	m := &memory{name: dir, labels: g.Labels}
	for c := 0; c < 10; c++ {
		m.classes = append(m.classes, fmt.Sprint(c))
	}
	d := g.Rows * g.Cols
	for i := 0; i < g.N; i++ {
		img := imageio.NewRGB(g.Cols, g.Rows)
		for j, b := range g.Pix[i*d : (i+1)*d] {
			img.Pix[3*j], img.Pix[3*j+1], img.Pix[3*j+2] = b, b, b
		}
		m.raw = append(m.raw, img)
		m.paths = append(m.paths, fmt.Sprintf("%s/%s#%d", dir, split, i))
	}
	return m
}
