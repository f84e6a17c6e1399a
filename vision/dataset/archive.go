package dataset

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// walkTar calls fn for every regular file of the (optionally gzipped) tar
// archive at p.
func walkTar(p string, fn func(name string, r io.Reader) error) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := maybeGunzip(f, p)
	if err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			// Read on to the end of the stream: gzip checks its CRC-32
			// and length only there, and a tar's end marker comes first.
			if _, err := io.Copy(io.Discard, r); err != nil {
				return fmt.Errorf("%s: corrupt archive: %w", p, err)
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%s: truncated archive", p)
			}
			return fmt.Errorf("%s: %w", p, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := fn(h.Name, tr); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%s: truncated archive (in %s)", p, h.Name)
			}
			return fmt.Errorf("%s: corrupt archive (in %s): %w", p, h.Name, err)
		}
	}
}

// OpenTarFolder reads the image-folder layout <split>/<class>/<image> (at
// any depth below a common prefix, e.g. cifar10/train/cat/0001.jpg) from a
// tar or tar.gz archive into memory, keeping only the given split.
func OpenTarFolder(archive, split string) (Dataset, error) {
	type item struct {
		name, class string
		data        []byte
	}
	var items []item
	var skipped []string
	err := walkTar(archive, func(name string, r io.Reader) error {
		parts := strings.Split(path.Clean(name), "/")
		i := slices.Index(parts, split)
		if i >= 0 && len(parts) >= i+3 && isSkipped(name) {
			skipped = append(skipped, archive+"#"+name)
		}
		if i < 0 || len(parts) < i+3 || !isImage(name) {
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		items = append(items, item{name: name, class: parts[i+1], data: b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no images under a %q directory", archive, split)
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := strings.Compare(a.class, b.class); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	m := &memory{name: archive, skipped: skipped}
	for _, it := range items {
		if len(m.classes) == 0 || m.classes[len(m.classes)-1] != it.class {
			m.classes = append(m.classes, it.class)
		}
		m.labels = append(m.labels, len(m.classes)-1)
		m.paths = append(m.paths, archive+"#"+it.name)
		m.encoded = append(m.encoded, it.data)
	}
	return m, nil
}
