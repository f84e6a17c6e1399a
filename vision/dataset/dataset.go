package dataset

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flycl/flycl/vision/imageio"
)

// Dataset is a labelled image collection in a fixed, deterministic order.
type Dataset interface {
	Len() int
	Label(i int) int
	// Classes returns the class names, indexed by label.
	Classes() []string
	// Path identifies sample i (a file, an archive member, or file#index).
	Path(i int) string
	// Image decodes sample i to RGB.
	Image(i int) (*imageio.RGB, error)
}

// imageExt are the extensions torchvision's ImageFolder accepts that
// imageio decodes as PIL does; skipExt those it accepts that imageio
// cannot decode PIL-exactly (WebP), which are skipped at indexing time
// and listed by Skipped, so that the caller can warn.
var (
	imageExt = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".ppm": true, ".bmp": true,
		".pgm": true, ".tif": true, ".tiff": true, ".gif": true}
	skipExt = map[string]bool{".webp": true}
)

func isImage(name string) bool { return imageExt[strings.ToLower(filepath.Ext(name))] }

// isSkipped reports whether a file of a class directory is left out and
// listed by Skipped: WebP (skipExt), and every other file that is not an
// image by its extension (notes.txt), except hidden files (.DS_Store).
func isSkipped(name string) bool {
	if skipExt[strings.ToLower(filepath.Ext(name))] {
		return true
	}
	return !isImage(name) && !strings.HasPrefix(path.Base(filepath.ToSlash(name)), ".")
}

// Skipped returns the files of the class directories of an image-folder
// data set (directory or archive) that were left out: files that are not
// images by their extension (hidden files aside) and WebP images, which
// no decoder reads as PIL does; nil for other data sets.
func Skipped(d Dataset) []string {
	switch d := d.(type) {
	case *Folder:
		return d.skipped
	case *memory:
		return d.skipped
	}
	return nil
}

// Files is a data set of image files given by path, without labels:
// every label is 0 and there are no classes. Decoder decodes them (its
// zero value: the default limits).
type Files struct {
	Paths   []string
	Decoder imageio.Decoder
}

func (f Files) Len() int                          { return len(f.Paths) }
func (f Files) Label(int) int                     { return 0 }
func (f Files) Classes() []string                 { return nil }
func (f Files) Path(i int) string                 { return f.Paths[i] }
func (f Files) Image(i int) (*imageio.RGB, error) { return f.Decoder.DecodeFile(f.Paths[i]) }

// WithDecoder returns d decoding its encoded images with dec (e.g. a
// different pixel limit). Data sets held as pixels are returned as they
// are.
func WithDecoder(d Dataset, dec imageio.Decoder) Dataset {
	switch d := d.(type) {
	case Files:
		d.Decoder = dec
		return d
	case *Folder:
		c := *d
		c.Decoder = dec
		return &c
	case *memory:
		c := *d
		c.decoder = dec
		return &c
	}
	return d
}

// Subset returns the samples idx of d, in that order: sample i of the
// subset is sample idx[i] of d, with its label, path and image; the
// classes are d's. Every index must be one of d's (0 ≤ idx[i] < d.Len()).
func Subset(d Dataset, idx []int) Dataset { return subset{d, idx} }

type subset struct {
	Dataset
	idx []int
}

func (s subset) Len() int                          { return len(s.idx) }
func (s subset) Label(i int) int                   { return s.Dataset.Label(s.idx[i]) }
func (s subset) Path(i int) string                 { return s.Dataset.Path(s.idx[i]) }
func (s subset) Image(i int) (*imageio.RGB, error) { return s.Dataset.Image(s.idx[i]) }

// Folder is torchvision's ImageFolder: root/<class>/**/<image>, classes in
// sorted order, files in sorted order within each class.
type Folder struct {
	Root string
	// Decoder decodes the images (the zero value: PIL's limits).
	Decoder imageio.Decoder
	classes []string
	paths   []string
	labels  []int
	skipped []string
}

// OpenFolder indexes root. An empty class directory or a root without
// class directories is an error naming the directory.
func OpenFolder(root string) (*Folder, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	f := &Folder{Root: root}
	for _, e := range ents {
		if e.IsDir() {
			f.classes = append(f.classes, e.Name())
		}
	}
	if len(f.classes) == 0 {
		return nil, fmt.Errorf("%s: no class directories", root)
	}
	slices.Sort(f.classes)
	for label, c := range f.classes {
		var files []string
		err := filepath.WalkDir(filepath.Join(root, c), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isImage(p) {
				files = append(files, p)
			}
			if !d.IsDir() && isSkipped(p) {
				f.skipped = append(f.skipped, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: class directory has no images", filepath.Join(root, c))
		}
		slices.Sort(files)
		for _, p := range files {
			f.paths = append(f.paths, p)
			f.labels = append(f.labels, label)
		}
	}
	return f, nil
}

func (f *Folder) Len() int                          { return len(f.paths) }
func (f *Folder) Label(i int) int                   { return f.labels[i] }
func (f *Folder) Classes() []string                 { return f.classes }
func (f *Folder) Path(i int) string                 { return f.paths[i] }
func (f *Folder) Image(i int) (*imageio.RGB, error) { return f.Decoder.DecodeFile(f.paths[i]) }

// memory is a data set held in memory: encoded images or raw pixels.
type memory struct {
	name    string
	classes []string
	paths   []string
	labels  []int
	encoded [][]byte       // encoded images, or
	raw     []*imageio.RGB // decoded ones
	decoder imageio.Decoder
	skipped []string
}

func (m *memory) Len() int          { return len(m.labels) }
func (m *memory) Label(i int) int   { return m.labels[i] }
func (m *memory) Classes() []string { return m.classes }
func (m *memory) Path(i int) string { return m.paths[i] }
func (m *memory) Image(i int) (*imageio.RGB, error) {
	if m.raw != nil {
		return m.raw[i], nil
	}
	img, err := m.decoder.Decode(m.encoded[i])
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", m.paths[i], err)
	}
	return img, nil
}
