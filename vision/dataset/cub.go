package dataset

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// OpenCUB reads CUB-200-2011 for split "train" or "test". src may be
//   - the official release, extracted (the directory holding images.txt,
//     image_class_labels.txt, train_test_split.txt, classes.txt and
//     images/) or as CUB_200_2011.tgz;
//   - the PILOT toolbox layout, a directory with train/<class>/ and
//     test/<class>/ (read as image folders).
//
// Labels follow classes.txt (ids 1..200 become 0..199), samples the order
// of images.txt.
func OpenCUB(src, split string) (Dataset, error) {
	if split != "train" && split != "test" {
		return nil, fmt.Errorf("cub: split %q, want train or test", split)
	}
	st, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(src, split)); err == nil {
			if _, err := os.Stat(filepath.Join(src, "images.txt")); err != nil {
				return OpenFolder(filepath.Join(src, split))
			}
		}
		if _, err := os.Stat(filepath.Join(src, "images.txt")); err != nil {
			if _, err2 := os.Stat(filepath.Join(src, "CUB_200_2011", "images.txt")); err2 == nil {
				src = filepath.Join(src, "CUB_200_2011")
			}
		}
	}
	meta := []string{"images.txt", "image_class_labels.txt", "train_test_split.txt", "classes.txt"}
	texts := map[string]string{}
	var archiveImages map[string][]byte
	if st.IsDir() {
		for _, name := range meta {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				return nil, fmt.Errorf("cub: %w", err)
			}
			texts[name] = string(b)
		}
	} else {
		// Two passes over the archive: metadata first, then the split's images.
		fs, err := openFiles(src, meta)
		if err != nil {
			return nil, err
		}
		for _, name := range meta {
			b, err := fs.read(name)
			if err != nil {
				return nil, fmt.Errorf("cub: %w", err)
			}
			texts[name] = string(b)
		}
	}
	table := func(name string) (map[int]string, []int, error) {
		vals := map[int]string{}
		var order []int
		for n, line := range strings.Split(texts[name], "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			id, rest, ok := strings.Cut(line, " ")
			k, err := strconv.Atoi(id)
			if !ok || err != nil {
				return nil, nil, fmt.Errorf("cub: %s line %d: %q is not \"<id> <value>\"", filepath.Join(src, name), n+1, line)
			}
			vals[k] = strings.TrimSpace(rest)
			order = append(order, k)
		}
		if len(order) == 0 {
			return nil, nil, fmt.Errorf("cub: %s is empty", filepath.Join(src, name))
		}
		return vals, order, nil
	}
	images, order, err := table("images.txt")
	if err != nil {
		return nil, err
	}
	labels, _, err := table("image_class_labels.txt")
	if err != nil {
		return nil, err
	}
	splits, _, err := table("train_test_split.txt")
	if err != nil {
		return nil, err
	}
	classes, corder, err := table("classes.txt")
	if err != nil {
		return nil, err
	}
	m := &memory{name: src}
	for i, id := range corder {
		if id != i+1 {
			return nil, fmt.Errorf("cub: %s: class ids are not 1..%d in order", filepath.Join(src, "classes.txt"), len(corder))
		}
		m.classes = append(m.classes, classes[id])
	}
	want := map[string]bool{}
	var rel []string
	for _, id := range order {
		s, ok := splits[id]
		if !ok {
			return nil, fmt.Errorf("cub: image %d has no entry in train_test_split.txt", id)
		}
		if (s == "1") != (split == "train") {
			continue
		}
		l, err := strconv.Atoi(labels[id])
		if err != nil || l < 1 || l > len(m.classes) {
			return nil, fmt.Errorf("cub: image %d has class %q in image_class_labels.txt", id, labels[id])
		}
		m.labels = append(m.labels, l-1)
		rel = append(rel, images[id])
		want[images[id]] = true
	}
	if st.IsDir() {
		f := &Folder{Root: src, classes: m.classes, labels: m.labels}
		for _, r := range rel {
			f.paths = append(f.paths, filepath.Join(src, "images", r))
		}
		return f, nil
	}
	archiveImages = map[string][]byte{}
	err = walkTar(src, func(name string, r io.Reader) error {
		i := strings.Index(name, "images/")
		if i < 0 || !want[name[i+len("images/"):]] {
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		archiveImages[path.Clean(name[i+len("images/"):])] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range rel {
		b, ok := archiveImages[path.Clean(r)]
		if !ok {
			return nil, fmt.Errorf("cub: %s has no images/%s", src, r)
		}
		m.encoded = append(m.encoded, b)
		m.paths = append(m.paths, src+"#images/"+r)
	}
	return m, nil
}
