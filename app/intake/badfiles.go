package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/internal/parallel"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// BadFile is an image that cannot be read or decoded.
type BadFile struct {
	Path string
	Err  error
}

// BadFilesError names every image of an input that cannot be read or
// decoded (Files, in the input's order), out of Total.
type BadFilesError struct {
	Files []BadFile
	Total int
}

func (e *BadFilesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d images cannot be read:", len(e.Files), e.Total)
	for _, f := range e.Files {
		fmt.Fprintf(&b, "\n  %s: %v", f.Path, trimPath(f.Err, f.Path))
	}
	return b.String()
}

// Unwrap makes the error an input error (flycl.IsInput: the data given
// was refused).
func (e *BadFilesError) Unwrap() error { return flycl.ErrBadInput }

// trimPath drops a "decode PATH: " prefix the decoder's error repeats.
func trimPath(err error, path string) string {
	s := err.Error()
	for _, p := range []string{"decode " + path + ": ", "open " + path + ": ", path + ": "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// Skipped returns the files of the input's data set that are not images
// by their extension (or are WebP) and were left out when it was indexed
// (dataset.Skipped); nil for other inputs.
func (in *Input) Skipped() []string {
	if in.Data == nil || in.files {
		return nil
	}
	return dataset.Skipped(in.Data)
}

// badImages decodes every image of ds as dec does and returns those that
// fail, in order.
func badImages(ctx context.Context, ds dataset.Dataset, dec imageio.Decoder) ([]BadFile, error) {
	ds = dataset.WithDecoder(ds, dec)
	errs := make([]error, ds.Len())
	var once sync.Once
	var cerr error
	parallel.Each(ds.Len(), func(i int) {
		if err := ctx.Err(); err != nil {
			once.Do(func() { cerr = err })
			return
		}
		_, errs[i] = ds.Image(i)
	})
	if cerr != nil {
		return nil, cerr
	}
	var bad []BadFile
	for i, err := range errs {
		if err != nil {
			bad = append(bad, BadFile{Path: ds.Path(i), Err: err})
		}
	}
	return bad, nil
}

// goodSubset is the samples idx of a data set.
type goodSubset struct {
	dataset.Dataset
	idx []int
}

func (v goodSubset) Len() int                          { return len(v.idx) }
func (v goodSubset) Label(i int) int                   { return v.Dataset.Label(v.idx[i]) }
func (v goodSubset) Path(i int) string                 { return v.Dataset.Path(v.idx[i]) }
func (v goodSubset) Image(i int) (*imageio.RGB, error) { return v.Dataset.Image(v.idx[i]) }

// extractGood extracts ds through e (extract runs it; the key names its
// cache entry) and, when an image cannot be decoded, finds every one
// that cannot: a *BadFilesError naming them all, or, with skip, the
// features of the others, their indices in ds (nil: all) and the bad
// files.
func extractGood(ctx context.Context, e *extract.Extractor, ds dataset.Dataset, skip bool, run func(dataset.Dataset, string) (*features.Set, bool, error), key string) (*features.Set, bool, []int, []BadFile, error) {
	s, cached, err := run(ds, key)
	var ie *extract.ImageError
	if !errors.As(err, &ie) {
		return s, cached, nil, nil, err
	}
	bad, berr := badImages(ctx, ds, e.Decoder)
	switch {
	case berr != nil:
		return nil, false, nil, nil, berr
	case len(bad) == 0: // read now, not then: report what extract saw
		return nil, false, nil, nil, err
	case !skip || len(bad) == ds.Len():
		return nil, false, nil, nil, &BadFilesError{Files: bad, Total: ds.Len()}
	}
	isBad := make(map[string]bool, len(bad))
	for _, b := range bad {
		isBad[b.Path] = true
	}
	var good []int
	for i := 0; i < ds.Len(); i++ {
		if !isBad[ds.Path(i)] {
			good = append(good, i)
		}
	}
	if key != "" {
		key = fmt.Sprintf("%s#without%d", key, len(bad))
		for _, b := range bad {
			key += "|" + b.Path
		}
	}
	s, cached, err = run(goodSubset{ds, good}, key)
	if err != nil {
		return nil, false, nil, nil, err
	}
	return s, cached, good, bad, nil
}
