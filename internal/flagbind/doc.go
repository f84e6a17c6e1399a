// Package flagbind binds the fields of a tagged struct to command-line
// flags, for both the standard library's flag package and pflag (whose
// flag sets take its Values), and remembers which flags the user set.
//
// A field is bound when it carries a flag tag:
//
//	M int `json:"m" flag:"m" help:"expansion dimension"`
//
// The struct's values when it is bound are the flags' defaults; parsing a
// flag writes the field. Every exported field must have a flag tag
// (`flag:"-"` leaves one out), so that a field added to the struct
// without a flag is an error of Bind rather than a setting no command can
// give. A field may be an int, uint64, float64, bool, string or []float64
// (written as a comma-separated list), or any type whose pointer
// implements encoding.TextUnmarshaler and whose value implements
// encoding.TextMarshaler (an enumeration written by its name).
//
// Names reads the flag tags of a library's settings struct without
// binding it, so that a command names the fields of the library's field
// errors (internal/fielderr) by their flags and tells which were given,
// with no list of its own.
//
// Set.Agree is the one check of "the flags the user set agree with this
// configuration" (a model file's, a statistics file's).
package flagbind
