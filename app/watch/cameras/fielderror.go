package cameras

import (
	"fmt"

	"github.com/flycl/flycl/internal/fielderr"
)

// FieldError is a field of a Single (or of a Several) that breaks a rule,
// or that cannot be used (a file that cannot be read, a program not
// found). Field is the field at fault, as Go names it ("FPS",
// "MQTT.User", "Collect.Every"); the message names fields through Name
// (nil: by their Go names), which a command sets to say its flags. It is
// the one field error type of the module (internal/fielderr): Problem
// says what is wrong ("must be positive"; with a field needed, Other, a
// format whose %s names it: "needs %s DIR"; with Err, a hint written
// after it, "": none).
type FieldError = fielderr.Error

// form is how a FieldError's message is written.
type form int

const (
	formValue    form = iota // NAME VALUE: PROBLEM (a string value quoted)
	formGive                 // give NAME PROBLEM
	formGot                  // NAME PROBLEM, got VALUE
	formNeed                 // NAME PROBLEM(NEED)
	formPair                 // NAME VALUE, OTHER VALUE: PROBLEM
	formErr                  // NAME: ERR
	formValueErr             // NAME VALUE: ERR PROBLEM (the value as it is)
	formSpaceErr             // NAME ERR
)

// withForm gives e the message of form f.
func withForm(e *FieldError, f form) *FieldError {
	e.Message = f.message
	return e
}

// message is e's message in form f.
func (f form) message(e *FieldError) string {
	name := e.NameOf
	n := name(e.Field)
	switch f {
	case formGive:
		return "give " + n + e.Problem
	case formGot:
		return fmt.Sprintf("%s %s, got %v", n, e.Problem, e.Value)
	case formNeed:
		return n + " " + fmt.Sprintf(e.Problem, name(e.Other))
	case formPair:
		return fmt.Sprintf("%s %v, %s %v: %s", n, e.Value, name(e.Other), e.OtherValue, e.Problem)
	case formErr:
		return fmt.Sprintf("%s: %v%s", n, e.Err, e.Problem)
	case formValueErr:
		return fmt.Sprintf("%s %v: %v%s", n, e.Value, e.Err, e.Problem)
	case formSpaceErr:
		return fmt.Sprintf("%s %v", n, e.Err)
	}
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("%s %q: %s", n, s, e.Problem)
	}
	return fmt.Sprintf("%s %v: %s", n, e.Value, e.Problem)
}

// badValue is a value that breaks a rule: "NAME VALUE: problem".
func badValue(field string, v any, problem string) *FieldError {
	return withForm(&FieldError{Field: field, Value: v, Problem: problem}, formValue)
}

// mustBe is a value that breaks a rule: "NAME must be …, got VALUE".
func mustBe(field string, v any, problem string) *FieldError {
	return withForm(&FieldError{Field: field, Value: v, Problem: "must be " + problem}, formGot)
}

// needs is a field given without the one it needs: problem's %s names
// that one.
func needs(field string, v any, need, problem string) *FieldError {
	return withForm(&FieldError{Field: field, Value: v, Other: need, Problem: problem}, formNeed)
}

// failed is a field that could not be used: "NAME: err".
func failed(field string, v any, err error) *FieldError {
	return withForm(&FieldError{Field: field, Value: v, Err: err}, formErr)
}

// failedValue is a field that could not be used, its value written:
// "NAME VALUE: err".
func failedValue(field string, v any, err error) *FieldError {
	return withForm(&FieldError{Field: field, Value: v, Err: err}, formValueErr)
}
