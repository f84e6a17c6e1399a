package onejson

import (
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing is returned by Decode when anything but white space follows
// the value.
var ErrTrailing = errors.New("data after the JSON value")

// Decode decodes the next JSON value of dec into v (with dec's settings:
// DisallowUnknownFields, UseNumber) and then requires the end of the
// input: anything after the value but white space is ErrTrailing. An
// error of the value itself is dec.Decode's, unwrapped.
func Decode(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ErrTrailing
	}
	return nil
}
