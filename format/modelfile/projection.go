package modelfile

import (
	"fmt"

	"github.com/flycl/flycl/format/npz"
	"github.com/flycl/flycl/projection"
)

// ExportProjection writes W to a .npz file with the arrays
//
//	indices  int32   m×p  column of each non-zero, ascending per row
//	values   float32 m×p  the non-zero values
//	shape    int64   (2,) = (m, d)
//	seed     uint64 as int64 (1,), only when W was generated from a seed
//
// The dense matrix is W[j, indices[j,i]] = values[j,i].
func ExportProjection(path string, w *projection.Matrix) error {
	zw, err := npz.Create(path)
	if err != nil {
		return err
	}
	zw.Int32("indices", w.Cols, w.M, w.P)
	zw.Float32("values", w.Vals, w.M, w.P)
	zw.Int64("shape", []int64{int64(w.M), int64(w.D)})
	if w.Seed != nil {
		zw.Int64("seed", []int64{int64(*w.Seed)})
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("export W to %s: %w", path, err)
	}
	return nil
}

// ImportProjection reads W from a .npz file holding either the sparse form
// written by ExportProjection (indices, values, shape) or a dense m×d
// matrix under the name "W" (any float dtype), as another implementation
// would save it with numpy.savez(path, W=W). A dense W must have the same
// number of non-zeros in every row.
func ImportProjection(path string) (*projection.Matrix, error) {
	r, err := npz.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fail := func(err error) (*projection.Matrix, error) {
		return nil, fmt.Errorf("import W from %s: %w", path, err)
	}
	if r.Has("W") {
		a, shape, err := r.Float32("W")
		if err != nil {
			return nil, err
		}
		if len(shape) != 2 {
			return fail(fmt.Errorf("array W has shape %v, want (m, d)", shape))
		}
		if err := checkWShape(int64(shape[0]), int64(shape[1])); err != nil {
			return fail(err)
		}
		w, err := projection.FromDense(shape[0], shape[1], a)
		if err != nil {
			return fail(err)
		}
		return w, nil
	}
	for _, k := range []string{"indices", "values", "shape"} {
		if !r.Has(k) {
			return fail(fmt.Errorf("no array %q (want indices, values and shape, or a dense W)", k))
		}
	}
	idx, ishape, err := r.Int64("indices")
	if err != nil {
		return nil, err
	}
	vals, vshape, err := r.Float32("values")
	if err != nil {
		return nil, err
	}
	shape, _, err := r.Int64("shape")
	if err != nil {
		return nil, err
	}
	if len(ishape) != 2 || len(vshape) != 2 || ishape[0] != vshape[0] || ishape[1] != vshape[1] {
		return fail(fmt.Errorf("indices %v and values %v must both be m×p", ishape, vshape))
	}
	if len(shape) != 2 || shape[0] != int64(ishape[0]) {
		return fail(fmt.Errorf("shape %v does not match %d rows", shape, ishape[0]))
	}
	// Before anything is built from it: d is read from the file, and
	// checking a seed regenerates W (m·d steps).
	if err := checkWShape(shape[0], shape[1]); err != nil {
		return fail(err)
	}
	cols := make([]int32, len(idx))
	for i, v := range idx {
		if v < 0 || v >= shape[1] {
			return fail(fmt.Errorf("indices[%d] = %d outside [0,%d)", i, v, shape[1]))
		}
		cols[i] = int32(v)
	}
	w, err := projection.New(ishape[0], int(shape[1]), ishape[1], cols, vals)
	if err != nil {
		return fail(err)
	}
	if r.Has("seed") {
		s, _, err := r.Int64("seed")
		if err == nil && len(s) == 1 {
			seed := uint64(s[0])
			if g, err := projection.Generate(w.M, w.D, w.P, seed); err == nil && g.Digest() == w.Digest() {
				w.Seed = &seed // provably the seeded W: store it by seed
			}
		}
	}
	return w, nil
}

// checkWShape bounds an imported W's shape m×d as a model file's header is
// bounded (MaxM, MaxD).
func checkWShape(m, d int64) error {
	if m <= 0 || m > MaxM {
		return fmt.Errorf("W has m=%d rows, want 1..%d", m, MaxM)
	}
	if d <= 0 || d > MaxD {
		return fmt.Errorf("W has d=%d columns, want 1..%d", d, MaxD)
	}
	return nil
}
