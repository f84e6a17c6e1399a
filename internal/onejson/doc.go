// Package onejson decodes exactly one JSON value: encoding/json's Decoder
// reads one value and leaves the rest, and its More reports false before
// a stray closing bracket ("{}}"), so a reader of outside bytes that
// checks More alone accepts trailing data. Decode reads the value and
// then requires the end of the input.
package onejson
