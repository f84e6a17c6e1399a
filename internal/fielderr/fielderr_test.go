package fielderr

import (
	"errors"
	"io/fs"
	"testing"
)

// TestMessages: each of the usual forms, by the fields' Go names and by
// a command's flag names (Name), a Name that does not know a field
// falling back to its Go name, and Message in place of the forms.
func TestMessages(t *testing.T) {
	flags := map[string]string{"FPS": "--fps", "Inbox.MaxItems": "--inbox-max-items", "Inbox.MaxBytes": "--inbox-max-bytes", "Model": "--model"}
	errRange := errors.New("out of range")
	for _, tc := range []struct {
		e               *Error
		byField, byFlag string
	}{
		{&Error{Field: "FPS", Value: -1.5, Problem: "must not be negative"}, "FPS -1.5: must not be negative", "--fps -1.5: must not be negative"},
		{&Error{Field: "Model", Value: "a b", Problem: "no such file"}, `Model "a b": no such file`, `--model "a b": no such file`},
		{&Error{Field: "Inbox.MaxItems", Value: 0, Other: "Inbox.MaxBytes", OtherValue: int64(9), Problem: "must be at least 1", Rule: errRange},
			"Inbox.MaxItems 0, Inbox.MaxBytes 9: must be at least 1", "--inbox-max-items 0, --inbox-max-bytes 9: must be at least 1"},
		{&Error{Field: "Model", Err: fs.ErrNotExist}, "Model: file does not exist", "--model: file does not exist"},
		{&Error{Field: "Model", Value: "m", Err: fs.ErrNotExist, Problem: "learn first"}, `Model "m": file does not exist: learn first`, `--model "m": file does not exist: learn first`},
		{&Error{Field: "Unnamed", Value: 3, Problem: "too many"}, "Unnamed 3: too many", "Unnamed 3: too many"},
		{&Error{Field: "FPS", Value: 0, Message: func(e *Error) string { return "give " + e.NameOf(e.Field) + " above 0" }}, "give FPS above 0", "give --fps above 0"},
	} {
		if got := tc.e.Error(); got != tc.byField {
			t.Errorf("by field: %q, want %q", got, tc.byField)
		}
		e := *tc.e
		e.Name = func(f string) string { return flags[f] }
		if got := e.Error(); got != tc.byFlag {
			t.Errorf("by flag: %q, want %q", got, tc.byFlag)
		}
	}
}

// TestUnwrap: errors.Is finds the rule and the error behind, errors.As
// the error behind's type, and an error wrapping an *Error finds it.
func TestUnwrap(t *testing.T) {
	rule := errors.New("rule")
	pe := &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}
	var err error = &Error{Field: "F", Rule: rule, Err: pe}
	var got *fs.PathError
	if !errors.Is(err, rule) || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &got) || got != pe {
		t.Errorf("%v: rule or error behind not found", err)
	}
	if errors.Is(&Error{Field: "F"}, rule) {
		t.Error("an error without a rule matched one")
	}
	var fe *Error
	if !errors.As(errors.Join(errors.New("context"), err), &fe) || fe.Field != "F" {
		t.Error("a wrapped *Error not found")
	}
}
