package main

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"

	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// Status codes, as flycl.h defines them (TestHeaderMatches checks that
// the two agree).
const (
	FLYCL_OK              = 0
	FLYCL_E_BAD_INPUT     = 1
	FLYCL_E_NOT_TRAINED   = 2
	FLYCL_E_UNKNOWN_CLASS = 3
	FLYCL_E_TOO_LARGE     = 4
	FLYCL_E_CLASS_NAME    = 5
	FLYCL_E_NO_UNDO       = 6
	FLYCL_E_HANDLE        = 7
	FLYCL_E_BUFFER        = 8
	FLYCL_E_CONFIG        = 9
	FLYCL_E_IO            = 10
	FLYCL_E_FORMAT        = 11
	FLYCL_E_LOCKED        = 12
	FLYCL_E_EXISTS        = 13
	FLYCL_E_BACKBONE      = 14
	FLYCL_E_NULL          = 15
	FLYCL_E_FAILED        = 16
	FLYCL_E_INTERNAL      = 99
)

// statusNames are the codes' names (flycl_status_name), by the macro's
// name in flycl.h.
var statusNames = map[string]struct {
	code int
	name string
}{
	"FLYCL_OK":              {FLYCL_OK, "ok"},
	"FLYCL_E_BAD_INPUT":     {FLYCL_E_BAD_INPUT, "bad input"},
	"FLYCL_E_NOT_TRAINED":   {FLYCL_E_NOT_TRAINED, "not trained"},
	"FLYCL_E_UNKNOWN_CLASS": {FLYCL_E_UNKNOWN_CLASS, "unknown class"},
	"FLYCL_E_TOO_LARGE":     {FLYCL_E_TOO_LARGE, "too large"},
	"FLYCL_E_CLASS_NAME":    {FLYCL_E_CLASS_NAME, "bad class name"},
	"FLYCL_E_NO_UNDO":       {FLYCL_E_NO_UNDO, "nothing to undo"},
	"FLYCL_E_HANDLE":        {FLYCL_E_HANDLE, "invalid handle"},
	"FLYCL_E_BUFFER":        {FLYCL_E_BUFFER, "buffer too small"},
	"FLYCL_E_CONFIG":        {FLYCL_E_CONFIG, "bad configuration"},
	"FLYCL_E_IO":            {FLYCL_E_IO, "input/output error"},
	"FLYCL_E_FORMAT":        {FLYCL_E_FORMAT, "not a model file"},
	"FLYCL_E_LOCKED":        {FLYCL_E_LOCKED, "model file locked"},
	"FLYCL_E_EXISTS":        {FLYCL_E_EXISTS, "file exists"},
	"FLYCL_E_BACKBONE":      {FLYCL_E_BACKBONE, "backbone error"},
	"FLYCL_E_NULL":          {FLYCL_E_NULL, "null pointer"},
	"FLYCL_E_FAILED":        {FLYCL_E_FAILED, "failed"},
	"FLYCL_E_INTERNAL":      {FLYCL_E_INTERNAL, "internal error"},
}

// statusName returns the name of a status code.
func statusName(code int) string {
	for _, s := range statusNames {
		if s.code == code {
			return s.name
		}
	}
	return "unknown status"
}

// statusError is an error with the status it is reported as, when no
// typed error below says it.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// errorf returns a statusError of code.
func errorf(code int, format string, a ...any) error {
	return &statusError{code, fmt.Errorf(format, a...)}
}

// statusOf maps an error to its status code: the root package's typed
// errors one to one (rootStatus), then the store's and deploy's, then the
// code an error was given (statusError), then the file system's; any
// other is FLYCL_E_FAILED.
func statusOf(err error) int {
	if err == nil {
		return FLYCL_OK
	}
	var le *modelfile.LockedError
	var se *statusError
	switch {
	case errors.As(err, &le):
		return FLYCL_E_LOCKED
	case errors.Is(err, store.ErrNoUndo):
		return FLYCL_E_NO_UNDO
	}
	if c := rootStatus(err); c != 0 {
		return c
	}
	switch {
	case errors.As(err, &se):
		return se.code
	case errors.Is(err, fs.ErrExist):
		return FLYCL_E_EXISTS
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return FLYCL_E_IO
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return FLYCL_E_IO
	}
	return FLYCL_E_FAILED
}

// guard runs fn, turning a panic into FLYCL_E_INTERNAL with its message
// and stack: no panic crosses the C interface.
func guard(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errorf(FLYCL_E_INTERNAL, "libflycl: internal error (a bug in flycl, please report it): %v\n%s", p, debug.Stack())
		}
	}()
	return fn()
}
