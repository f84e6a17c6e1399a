package configflag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flycl/flycl/internal/onejson"
)

// Setting is one entry of a settings file: a flag's name and its JSON
// value, not yet turned into flag text (Text does).
type Setting struct {
	Name  string
	value any
}

// A SettingsError is an error in the bytes of a settings file (not
// valid JSON, or a value that is no flag value). Its text is the problem
// alone; the caller names the file and, from Text, the setting.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string { return e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }

func settingsErr(format string, a ...any) error {
	return &SettingsError{Err: fmt.Errorf(format, a...)}
}

// ReadSettings parses a settings file: one JSON object whose keys are flag
// names and whose values are flag values ({"tasks": 5, "seeds": [1, 2]}).
// The settings come in name order, so that of several bad settings a
// caller always names the same one. Numbers keep their text: 1000000 is
// "1000000", never "1e+06", which an integer flag refuses.
func ReadSettings(b []byte) ([]Setting, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var vals map[string]any
	if err := onejson.Decode(dec, &vals); errors.Is(err, onejson.ErrTrailing) {
		return nil, settingsErr("data after the JSON object")
	} else if err != nil {
		return nil, &SettingsError{Err: err}
	}
	if vals == nil {
		return nil, settingsErr("want a JSON object of settings, not null")
	}
	out := make([]Setting, 0, len(vals))
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		out = append(out, Setting{Name: name, value: vals[name]})
	}
	return out, nil
}

// Text is the setting's value as flag text: a string as it is, a number
// as written, a boolean, or a list of those joined by commas. Null, an
// object and a list inside a list are errors (*SettingsError).
func (s Setting) Text() (string, error) { return settingText(s.value) }

func settingText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if _, ok := e.([]any); ok {
				return "", settingsErr("a list inside a list")
			}
			p, err := settingText(e)
			if err != nil {
				return "", err
			}
			parts[i] = p
		}
		return strings.Join(parts, ","), nil
	case nil:
		return "", settingsErr("null: give a value or leave the setting out")
	default:
		return "", settingsErr("an object: want a string, number, boolean or list")
	}
}
