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
// ErrTooLarge, ErrUnknownClass, a *NameError, or an error with a method
// BadInput() bool that returns true: how a package the core does not
// know, such as features, marks a file it refuses) rather than by the
// model, the numerics or the system: a server answers it 4xx, a command
// exits with its input status.
func IsInput(err error) bool {
	var ne *NameError
	var bi interface{ BadInput() bool }
	return errors.Is(err, ErrBadInput) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnknownClass) || errors.As(err, &ne) ||
		errors.As(err, &bi) && bi.BadInput()
}

// Input returns err, its message unchanged, marked as caused by the input
// given: IsInput reports true and errors.Is(err, ErrBadInput) holds. nil
// stays nil. Packages that check input before it reaches the model (a
// feature file, a merge of statistics) mark their refusals with it.
func Input(err error) error {
	if err == nil {
		return nil
	}
	return &inputError{err}
}

type inputError struct{ err error }

func (e *inputError) Error() string        { return e.err.Error() }
func (e *inputError) Unwrap() error        { return e.err }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

// BadInput marks it as input refused for packages below the core, which
// cannot import it (see IsInput).
func (e *inputError) BadInput() bool { return true }
