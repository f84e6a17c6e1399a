package fielderr

import "fmt"

// Error is a field of a settings struct that breaks a rule, or that
// could not be used (a file that cannot be read).
type Error struct {
	// Field is the field at fault, as Go names it ("FPS", "MQTT.User").
	Field string
	// Value is its value (nil: not quoted).
	Value any
	// Problem says what is wrong ("must be positive").
	Problem string
	// Other is a second field the problem is about ("Config.MaxBodyBytes"
	// for a limit above another), with its value.
	Other      string
	OtherValue any
	// Rule is the rule broken, for errors.Is (a package's sentinel);
	// nil when Err says it.
	Rule error
	// Err is the error met using the field (a parse error, an open
	// error), also for errors.Is and errors.As; nil for a rule alone.
	Err error
	// Name names a field in the message (nil: by its Go name). A
	// command sets it to say its flags.
	Name func(field string) string
	// Message writes e's message, naming fields through e.NameOf, when
	// the usual forms do not say it (nil: "NAME VALUE: PROBLEM", with the
	// other field "NAME VALUE, OTHER VALUE: PROBLEM", for an Err
	// "NAME: ERR" or "NAME VALUE: ERR").
	Message func(e *Error) string
}

// NameOf names field as the message does (Name, else the field's name).
func (e *Error) NameOf(field string) string {
	if e.Name != nil {
		if n := e.Name(field); n != "" {
			return n
		}
	}
	return field
}

func (e *Error) Error() string {
	if e.Message != nil {
		return e.Message(e)
	}
	n := e.NameOf(e.Field)
	if e.Value != nil {
		if s, ok := e.Value.(string); ok {
			n = fmt.Sprintf("%s %q", n, s)
		} else {
			n = fmt.Sprintf("%s %v", n, e.Value)
		}
	}
	switch {
	case e.Err != nil && e.Problem == "":
		return fmt.Sprintf("%s: %v", n, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("%s: %v: %s", n, e.Err, e.Problem)
	case e.Other != "":
		return fmt.Sprintf("%s, %s %v: %s", n, e.NameOf(e.Other), e.OtherValue, e.Problem)
	}
	return fmt.Sprintf("%s: %s", n, e.Problem)
}

// Unwrap returns Rule and Err, those set.
func (e *Error) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Rule, e.Err} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}
