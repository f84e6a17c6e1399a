package flycl

import "errors"

// Errors a caller may need to tell apart, with errors.Is. Every error
// the package returns for one of these cases wraps the sentinel, with the
// detail in its message; a *NameError (a class name that breaks a rule)
// is also input the caller should refuse.
var (
	// ErrNotTrained: a prediction or evaluation before any class was
	// learned.
	ErrNotTrained = errors.New("flycl: the model has not learned any class yet")
	// ErrUnknownClass: a class (label or name) the model does not have.
	ErrUnknownClass = errors.New("flycl: unknown class")
	// ErrTooLarge: features whose statistics float32 cannot hold.
	ErrTooLarge = errors.New("flycl: features too large for float32 statistics")
	// ErrBadInput: input that does not fit the model: a wrong dimension,
	// label count or sample count, an empty task, data that is not what
	// a class learned.
	ErrBadInput = errors.New("flycl: bad input")
)

// IsInput reports whether err was caused by the input given (ErrBadInput,
// ErrTooLarge, ErrUnknownClass or a *NameError) rather than by the model,
// the numerics or the system: a server answers it 4xx, a command exits
// with its input status.
func IsInput(err error) bool {
	var ne *NameError
	return errors.Is(err, ErrBadInput) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnknownClass) || errors.As(err, &ne)
}
