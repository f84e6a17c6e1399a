package main

// exports.go is the C interface: one exported function per function of
// flycl.h, each turning C arguments into Go values (reading the caller's
// arrays in place, copying what a model keeps), calling lib.go, and
// turning the result into a status code. Every one runs under guard, so
// no panic crosses into C.

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"
)

// reg holds the handles of the process: the C interface's one piece of
// state, as a C library's handle table is.
var reg = newRegistry()

// maxValues bounds an array's length (n·d values) a call accepts, far
// above any real input, so that n·d cannot overflow.
const maxValues = 1 << 40

// call runs fn under guard and returns its status, recording the
// message of a failure as the calling thread's last error.
func call(fn func() error) C.int {
	err := guard(fn)
	if err == nil {
		return FLYCL_OK
	}
	setLastError(err.Error())
	return C.int(statusOf(err))
}

// floats views the caller's n×d array in place (read during the call
// only; never kept).
func floats(p *C.float, n, d C.int64_t) ([]float32, error) {
	switch {
	case n < 0 || d <= 0:
		return nil, inputError(fmt.Errorf("libflycl: %d samples of dimension %d", n, d))
	case int64(n) > maxValues/int64(d):
		return nil, inputError(fmt.Errorf("libflycl: %d samples of dimension %d: too many values", n, d))
	case n == 0:
		return []float32{}, nil
	case p == nil:
		return nil, errorf(FLYCL_E_NULL, "libflycl: the features are NULL")
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), int(n)*int(d)), nil
}

// outFloats views an output array of cap entries, of which need are
// written.
func outFloats(p *C.float, capacity C.size_t, need int, what string) ([]float32, error) {
	if err := checkOut(unsafe.Pointer(p), capacity, need, what); err != nil || need == 0 {
		return nil, err
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), need), nil
}

func checkOut(p unsafe.Pointer, capacity C.size_t, need int, what string) error {
	switch {
	case uint64(capacity) < uint64(need):
		return errorf(FLYCL_E_BUFFER, "libflycl: %s needs %d entries, the buffer holds %d", what, need, capacity)
	case p == nil && need > 0:
		return errorf(FLYCL_E_NULL, "libflycl: %s: the output buffer is NULL", what)
	}
	return nil
}

// strings copies n C strings.
func cstrings(p **C.char, n C.int64_t, what string) ([]string, error) {
	if n < 0 || n > maxValues {
		return nil, inputError(fmt.Errorf("libflycl: %d %s", n, what))
	}
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, errorf(FLYCL_E_NULL, "libflycl: the %s are NULL", what)
	}
	out := make([]string, n)
	for i, s := range unsafe.Slice(p, int(n)) {
		if s == nil {
			return nil, errorf(FLYCL_E_NULL, "libflycl: %s %d is NULL", what, i)
		}
		out[i] = C.GoString(s)
	}
	return out, nil
}

func gostring(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// putString copies s into the caller's buffer (see flycl.h).
func putString(s string, buf *C.char, capacity C.size_t, length *C.size_t) error {
	if length != nil {
		*length = C.size_t(len(s))
	}
	if capacity > 0 && buf == nil {
		return errorf(FLYCL_E_NULL, "libflycl: the string buffer is NULL")
	}
	n := min(len(s), int(min(capacity, C.size_t(math.MaxInt32)))-1)
	if n >= 0 {
		dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), n+1)
		copy(dst, s[:n])
		dst[n] = 0
	}
	if n < len(s) {
		return errorf(FLYCL_E_BUFFER, "libflycl: the string has %d bytes, the buffer holds %d with its NUL", len(s), capacity)
	}
	return nil
}

func modelOf(h C.uint64_t) (*model, error) { return reg.model(uint64(h)) }

//export flycl_abi_version
func flycl_abi_version() C.int { return 2 }

//export flycl_last_error
func flycl_last_error(buf *C.char, capacity C.size_t, length *C.size_t) C.int {
	// not through call: reading the last error must not replace it
	err := guard(func() error { return putString(lastError(), buf, capacity, length) })
	return C.int(statusOf(err))
}

var statusStrings = sync.OnceValue(func() map[int]*C.char {
	m := map[int]*C.char{}
	for _, s := range statusNames {
		m[s.code] = C.CString(s.name) // static: never freed
	}
	m[-1] = C.CString("unknown status")
	return m
})

//export flycl_status_name
func flycl_status_name(status C.int) *C.char {
	if s, ok := statusStrings()[int(status)]; ok {
		return s
	}
	return statusStrings()[-1]
}

//export flycl_free
func flycl_free(p unsafe.Pointer) { C.free(p) }

//export flycl_model_new
func flycl_model_new(config *C.char, d C.int64_t, out *C.uint64_t) C.int {
	return call(func() error {
		if out == nil {
			return errorf(FLYCL_E_NULL, "libflycl: model_new: out is NULL")
		}
		id, err := reg.newModel(gostring(config), int(d))
		*out = C.uint64_t(id)
		return err
	})
}

//export flycl_model_load
func flycl_model_load(path *C.char, out *C.uint64_t) C.int {
	return call(func() error {
		if path == nil || out == nil {
			return errorf(FLYCL_E_NULL, "libflycl: model_load: path or out is NULL")
		}
		id, err := reg.load(C.GoString(path))
		*out = C.uint64_t(id)
		return err
	})
}

//export flycl_model_load_bytes
func flycl_model_load_bytes(buf unsafe.Pointer, n C.size_t, out *C.uint64_t) C.int {
	return call(func() error {
		if (buf == nil && n > 0) || out == nil {
			return errorf(FLYCL_E_NULL, "libflycl: model_load_bytes: buf or out is NULL")
		}
		var b []byte
		if n > 0 {
			b = unsafe.Slice((*byte)(buf), int(n))
		}
		id, err := reg.loadBytes(b)
		*out = C.uint64_t(id)
		return err
	})
}

//export flycl_model_save
func flycl_model_save(h C.uint64_t, path *C.char) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		if path == nil {
			return errorf(FLYCL_E_NULL, "libflycl: model_save: path is NULL")
		}
		return m.save(C.GoString(path))
	})
}

//export flycl_model_save_bytes
func flycl_model_save_bytes(h C.uint64_t, buf *unsafe.Pointer, length *C.size_t) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		if buf == nil || length == nil {
			return errorf(FLYCL_E_NULL, "libflycl: model_save_bytes: buf or len is NULL")
		}
		b, err := m.saveBytes()
		if err != nil {
			return orCode(err, FLYCL_E_FAILED)
		}
		p := C.malloc(C.size_t(len(b)))
		if p == nil {
			return errorf(FLYCL_E_FAILED, "libflycl: model_save_bytes: out of memory for %d bytes", len(b))
		}
		copy(unsafe.Slice((*byte)(p), len(b)), b)
		*buf, *length = p, C.size_t(len(b))
		return nil
	})
}

//export flycl_model_free
func flycl_model_free(h C.uint64_t) C.int {
	return call(func() error { return reg.freeModel(uint64(h)) })
}

//export flycl_learn
func flycl_learn(h C.uint64_t, x *C.float, n, d C.int64_t, y *C.int32_t, names **C.char, nNames C.int64_t,
	lambda C.double, batch C.int64_t, lambdaOut *C.double) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		xs, err := floats(x, n, d)
		if err != nil {
			return err
		}
		if n > 0 && y == nil {
			return errorf(FLYCL_E_NULL, "libflycl: learn: the labels are NULL")
		}
		ns, err := cstrings(names, nNames, "class names")
		if err != nil {
			return err
		}
		var ys []int32
		if n > 0 {
			ys = slices.Clone(unsafe.Slice((*int32)(unsafe.Pointer(y)), int(n)))
		}
		// a copy: the model's history keeps the features for unlearn
		l, err := m.learn(slices.Clone(xs), int(n), int(d), ys, ns, float64(lambda), int(batch))
		if err == nil && lambdaOut != nil {
			*lambdaOut = C.double(l)
		}
		return err
	})
}

//export flycl_forget
func flycl_forget(h C.uint64_t, name *C.char, x *C.float, n, d C.int64_t, exact *C.int) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		if name == nil {
			return errorf(FLYCL_E_NULL, "libflycl: forget: the class name is NULL")
		}
		var xs []float32
		if x != nil {
			if n <= 0 {
				return inputError(fmt.Errorf("libflycl: forget: features of %d samples", n))
			}
			v, err := floats(x, n, d)
			if err != nil {
				return err
			}
			xs = slices.Clone(v)
		}
		ex, err := m.forget(C.GoString(name), xs, int(d))
		if err == nil && exact != nil {
			*exact = 0
			if ex {
				*exact = 1
			}
		}
		return err
	})
}

//export flycl_unlearn
func flycl_unlearn(h C.uint64_t) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		return m.unlearn()
	})
}

//export flycl_scores
func flycl_scores(h C.uint64_t, x *C.float, n, d C.int64_t, out *C.float, outLen C.size_t) C.int {
	return call(func() error { return scoresInto(h, x, n, d, out, outLen, nil) })
}

//export flycl_scores_n
func flycl_scores_n(h C.uint64_t, x *C.float, n, d C.int64_t, out *C.float, outLen C.size_t, classes *C.int64_t) C.int {
	return call(func() error { return scoresInto(h, x, n, d, out, outLen, classes) })
}

// scoresInto writes the scores of flycl_scores, and their class count to
// classes when it is not nil (read under the model's lock with them, also
// when out is too small).
func scoresInto(h C.uint64_t, x *C.float, n, d C.int64_t, out *C.float, outLen C.size_t, classes *C.int64_t) error {
	m, err := modelOf(h)
	if err != nil {
		return err
	}
	return m.readPred(func(p *predictor) error {
		xs, err := floats(x, n, d)
		if err != nil {
			return err
		}
		if err := checkInput(xs, int(n), int(d), p.d); err != nil {
			return err
		}
		if err := p.checkTrained(); err != nil {
			return err
		}
		if classes != nil {
			*classes = C.int64_t(p.classes())
		}
		o, err := outFloats(out, outLen, int(n)*p.classes(), "scores")
		if err != nil || n == 0 {
			return err
		}
		return p.scores(ctxBackground, xs, o)
	})
}

//export flycl_top
func flycl_top(h C.uint64_t, x *C.float, n, d C.int64_t, k C.int32_t, classes *C.int32_t, scores *C.float, outLen C.size_t) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		if k <= 0 {
			return inputError(fmt.Errorf("libflycl: top: k must be positive, got %d", k))
		}
		return m.readPred(func(p *predictor) error {
			xs, err := floats(x, n, d)
			if err != nil {
				return err
			}
			if err := checkInput(xs, int(n), int(d), p.d); err != nil {
				return err
			}
			if err := p.checkTrained(); err != nil {
				return err
			}
			need := int(n) * int(k)
			if err := checkOut(unsafe.Pointer(classes), outLen, need, "top classes"); err != nil || n == 0 {
				return err
			}
			cls := unsafe.Slice((*int32)(unsafe.Pointer(classes)), need)
			var sc []float32
			if scores != nil {
				sc = unsafe.Slice((*float32)(unsafe.Pointer(scores)), need)
			}
			return p.top(ctxBackground, xs, int(n), int(k), cls, sc)
		})
	})
}

//export flycl_answer
func flycl_answer(h C.uint64_t, x *C.float, n, d C.int64_t, rejection *C.char, cls, unknown *C.int32_t, prob, margin *C.double) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		rej := gostring(rejection)
		return m.readPred(func(p *predictor) error {
			xs, err := floats(x, n, d)
			if err != nil {
				return err
			}
			if err := checkInput(xs, int(n), int(d), p.d); err != nil {
				return err
			}
			if err := p.checkTrained(); err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			if cls == nil {
				return errorf(FLYCL_E_NULL, "libflycl: answer: cls is NULL")
			}
			k := int(n)
			var u []int32
			var pr, mg []float64
			if unknown != nil {
				u = unsafe.Slice((*int32)(unsafe.Pointer(unknown)), k)
			}
			if prob != nil {
				pr = unsafe.Slice((*float64)(unsafe.Pointer(prob)), k)
			}
			if margin != nil {
				mg = unsafe.Slice((*float64)(unsafe.Pointer(margin)), k)
			}
			return p.answer(ctxBackground, xs, k, rej, unsafe.Slice((*int32)(unsafe.Pointer(cls)), k), u, pr, mg)
		})
	})
}

// facts runs fn with a model's facts.
func facts(h C.uint64_t, fn func(f modelFacts) error) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		var f modelFacts
		if err := m.read(func(dm *deployModel, _ *predictor) error { f = factsOf(dm); return nil }); err != nil {
			return err
		}
		return fn(f)
	})
}

// factInt64 writes one integer fact of model h to *out (NULL: FLYCL_E_NULL
// naming what).
func factInt64(h C.uint64_t, out *C.int64_t, what string, get func(modelFacts) int64) C.int {
	return facts(h, func(f modelFacts) error {
		if err := notNull(unsafe.Pointer(out), what); err != nil {
			return err
		}
		*out = C.int64_t(get(f))
		return nil
	})
}

// modelString writes the string that str makes of model h (read under the
// model's read lock) to buf, as putString does.
func modelString(h C.uint64_t, str func(*deployModel) (string, error), buf *C.char, capacity C.size_t, length *C.size_t) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		var js string
		if err := m.read(func(dm *deployModel, _ *predictor) error {
			var err error
			js, err = str(dm)
			return err
		}); err != nil {
			return err
		}
		return putString(js, buf, capacity, length)
	})
}

func notNull(p unsafe.Pointer, what string) error {
	if p == nil {
		return errorf(FLYCL_E_NULL, "libflycl: %s is NULL", what)
	}
	return nil
}

//export flycl_model_input_dim
func flycl_model_input_dim(h C.uint64_t, d *C.int64_t) C.int {
	return factInt64(h, d, "d", func(f modelFacts) int64 { return int64(f.d) })
}

//export flycl_model_num_classes
func flycl_model_num_classes(h C.uint64_t, c *C.int64_t) C.int {
	return factInt64(h, c, "c", func(f modelFacts) int64 { return int64(len(f.names)) })
}

//export flycl_model_class_name
func flycl_model_class_name(h C.uint64_t, i C.int64_t, buf *C.char, capacity C.size_t, length *C.size_t) C.int {
	return facts(h, func(f modelFacts) error {
		if i < 0 || int64(i) >= int64(len(f.names)) {
			return inputError(fmt.Errorf("libflycl: class index %d, the model has %d classes", i, len(f.names)))
		}
		return putString(f.names[i], buf, capacity, length)
	})
}

//export flycl_model_class_index
func flycl_model_class_index(h C.uint64_t, name *C.char, i *C.int64_t) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		if name == nil || i == nil {
			return errorf(FLYCL_E_NULL, "libflycl: class_index: name or i is NULL")
		}
		return m.read(func(dm *deployModel, _ *predictor) error {
			c, err := classIndex(dm, C.GoString(name))
			*i = C.int64_t(c)
			return err
		})
	})
}

//export flycl_model_lambda
func flycl_model_lambda(h C.uint64_t, lambda *C.double) C.int {
	return facts(h, func(f modelFacts) error {
		if err := notNull(unsafe.Pointer(lambda), "lambda"); err != nil {
			return err
		}
		*lambda = C.double(f.lambda)
		return nil
	})
}

//export flycl_model_samples
func flycl_model_samples(h C.uint64_t, n *C.int64_t) C.int {
	return factInt64(h, n, "n", func(f modelFacts) int64 { return int64(f.samples) })
}

//export flycl_model_history_json
func flycl_model_history_json(h C.uint64_t, buf *C.char, capacity C.size_t, length *C.size_t) C.int {
	return modelString(h, historyJSON, buf, capacity, length)
}

//export flycl_model_info_json
func flycl_model_info_json(h C.uint64_t, buf *C.char, capacity C.size_t, length *C.size_t) C.int {
	return modelString(h, infoJSON, buf, capacity, length)
}

//export flycl_extractor_open
func flycl_extractor_open(backbone, modelsDir, ortLib *C.char, out *C.uint64_t, dim *C.int64_t) C.int {
	return call(func() error {
		if out == nil {
			return errorf(FLYCL_E_NULL, "libflycl: extractor_open: out is NULL")
		}
		id, dm, err := reg.openExtractor(gostring(backbone), gostring(modelsDir), gostring(ortLib), nil, false)
		*out = C.uint64_t(id)
		if err == nil && dim != nil {
			*dim = C.int64_t(dm)
		}
		return err
	})
}

//export flycl_extractor_for_model
func flycl_extractor_for_model(h C.uint64_t, modelsDir, ortLib *C.char, out *C.uint64_t, dim *C.int64_t) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(FLYCL_E_NULL, "libflycl: extractor_for_model: out is NULL")
		}
		var mp *pipeline
		var trained bool
		if err := m.read(func(dm *deployModel, p *predictor) error {
			mp, trained = dm.Pipeline, p.classes() > 0
			return nil
		}); err != nil {
			return err
		}
		if mp == nil {
			return inputError(fmt.Errorf("libflycl: the model records no backbone (it learned from feature vectors)"))
		}
		id, dm, err := reg.openExtractor("", gostring(modelsDir), gostring(ortLib), mp, trained)
		*out = C.uint64_t(id)
		if err == nil && dim != nil {
			*dim = C.int64_t(dm)
		}
		return err
	})
}

//export flycl_extract_files
func flycl_extract_files(e C.uint64_t, paths **C.char, n C.int64_t, out *C.float, outLen C.size_t) C.int {
	return call(func() error {
		x, err := reg.extractor(uint64(e))
		if err != nil {
			return err
		}
		ps, err := cstrings(paths, n, "paths")
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			return inputError(fmt.Errorf("libflycl: extract: no images"))
		}
		o, err := outFloats(out, outLen, len(ps)*x.dim, "features")
		if err != nil {
			return err
		}
		return x.extract(ps, o)
	})
}

//export flycl_model_use_extractor
func flycl_model_use_extractor(h, e C.uint64_t) C.int {
	return call(func() error {
		m, err := modelOf(h)
		if err != nil {
			return err
		}
		x, err := reg.extractor(uint64(e))
		if err != nil {
			return err
		}
		return m.useExtractor(x)
	})
}

//export flycl_extractor_free
func flycl_extractor_free(e C.uint64_t) C.int {
	return call(func() error { return reg.freeExtractor(uint64(e)) })
}
