package onejson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDecode: one value, with white space around it, decodes; anything
// after it (another value, a stray bracket, a comma, garbage) is
// ErrTrailing; a bad value is the decoder's own error, not ErrTrailing.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error // nil, ErrTrailing, or errSyntax for the decoder's own
	}{
		{`{"a": 1}`, nil},
		{" \n{\"a\": 1}\n\t ", nil},
		{`{}`, nil},
		{`{"a": 1}}`, ErrTrailing},
		{`{"a": 1}]`, ErrTrailing},
		{`{"a": 1} {"a": 2}`, ErrTrailing},
		{`{"a": 1},`, ErrTrailing},
		{`{"a": 1} x`, ErrTrailing},
		{`{"a": 1} null`, ErrTrailing},
		{`{"a": `, errSyntax},
		{`}`, errSyntax},
		{``, errSyntax},
	} {
		var v map[string]any
		err := Decode(json.NewDecoder(strings.NewReader(tc.in)), &v)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%q: %v, want it decoded", tc.in, err)
		case tc.want == ErrTrailing && !errors.Is(err, ErrTrailing):
			t.Errorf("%q: %v, want ErrTrailing", tc.in, err)
		case tc.want == errSyntax && (err == nil || errors.Is(err, ErrTrailing)):
			t.Errorf("%q: %v, want the decoder's error", tc.in, err)
		}
		if tc.want == nil && v["a"] != nil && v["a"] != float64(1) {
			t.Errorf("%q: decoded %v", tc.in, v)
		}
	}
}

var errSyntax = errors.New("syntax")

// FuzzDecode: whatever Decode accepts is one valid JSON value
// (json.Valid), and what json.Valid accepts as an object Decode accepts.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1}}`, `null}`, ` {} `, `[1]`, `{"a":1} {"b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber() // a number beyond float64 is still one JSON value
		err := Decode(dec, &v)
		if err == nil && !json.Valid(b) {
			t.Fatalf("Decode accepted %q, which is not one JSON value", b)
		}
		if err != nil && json.Valid(b) {
			t.Fatalf("Decode refused %q, one valid JSON value: %v", b, err)
		}
	})
}
