package cameras

import "fmt"

// FieldError is a field of a Single (or of a Several) that breaks a rule,
// or that cannot be used (a file that cannot be read, a program not
// found). Field is the field at fault, as Go names it ("FPS",
// "MQTT.User", "Collect.Every"); the message names fields through Name
// (nil: by their Go names), which a command sets to say its flags.
type FieldError struct {
	Field string
	Value any // the field's value
	// Problem says what is wrong ("must be positive"); with Need, it is
	// a format whose %s is the field needed ("needs %s DIR"); with Err,
	// a hint written after it ("": none).
	Problem string
	// Need is the field that Field needs (Field is given without it).
	Need string
	// Other and OtherValue are a second field that the Problem is about
	// too, and its value.
	Other      string
	OtherValue any
	// Err is the error met using the field (nil for a broken rule).
	Err error
	// Name names a field in the message.
	Name func(field string) string

	form form
}

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

func (e *FieldError) Error() string {
	name := e.Name
	if name == nil {
		name = func(f string) string { return f }
	}
	n := name(e.Field)
	switch e.form {
	case formGive:
		return "give " + n + e.Problem
	case formGot:
		return fmt.Sprintf("%s %s, got %v", n, e.Problem, e.Value)
	case formNeed:
		return n + " " + fmt.Sprintf(e.Problem, name(e.Need))
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

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// badValue is a value that breaks a rule: "NAME VALUE: problem".
func badValue(field string, v any, problem string) *FieldError {
	return &FieldError{Field: field, Value: v, Problem: problem}
}

// mustBe is a value that breaks a rule: "NAME must be …, got VALUE".
func mustBe(field string, v any, problem string) *FieldError {
	return &FieldError{Field: field, Value: v, Problem: "must be " + problem, form: formGot}
}

// needs is a field given without the one it needs: problem's %s names
// that one.
func needs(field string, v any, need, problem string) *FieldError {
	return &FieldError{Field: field, Value: v, Need: need, Problem: problem, form: formNeed}
}

// failed is a field that could not be used: "NAME: err".
func failed(field string, v any, err error) *FieldError {
	return &FieldError{Field: field, Value: v, Err: err, form: formErr}
}

// failedValue is a field that could not be used, its value written:
// "NAME VALUE: err".
func failedValue(field string, v any, err error) *FieldError {
	return &FieldError{Field: field, Value: v, Err: err, form: formValueErr}
}
