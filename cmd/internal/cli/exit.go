package cli

import (
	"errors"
	"os/exec"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// Exit statuses of flycl and flycl-lab (docs/DEPLOY.md, "Exit status"). The
// one place an error becomes a status: by the library's typed errors, with
// errors.Is.
const (
	ExitFailure = 1 // anything else: a failed computation, I/O, a bug
	ExitInput   = 2 // the input given was refused: data, features, names, flags
	ExitLocked  = 3 // the model file is held by another writer (retry, or --wait)
)

// ExitCode maps an error to the exit status; a program run in its place
// (flycl running flycl-lab) that exited non-zero gives its own status.
func ExitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	case errors.Is(err, modelfile.ErrLocked):
		return ExitLocked
	case flycl.IsInput(err):
		return ExitInput
	}
	return ExitFailure
}
