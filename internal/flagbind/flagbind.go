package flagbind

import (
	"encoding"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Set is a struct bound to flags.
type Set struct {
	typ    reflect.Type
	values []*Value
	byFlag map[string]*Value
	byName map[string]*Value // by Go field name
}

// Value is one bound field. It implements flag.Value and pflag.Value
// (with Type), so that a pflag flag set takes it as
// fs.VarPF(v, v.Flag, "", v.Help), with NoOptDefVal "true" when IsBool. (This package does not import pflag, so that programs
// without it, such as the Beam launcher, need not build it.)
type Value struct {
	// Flag is the flag's name (without dashes), Field the Go field's
	// name and Help the flag's usage text.
	Flag, Field, Help string
	v                 reflect.Value // the field, addressable
	changed           bool
	// text is the value as the user wrote it (String returns it while
	// the field holds what it was parsed to, as textOf formats it).
	text, textOf string
}

// ErrTag reports a struct that cannot be bound: a field without a flag
// tag, an unsupported type, a flag name used twice.
var ErrTag = errors.New("flagbind: cannot bind")

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
)

// Helper is a struct whose flags' help depends on more than its tags
// (a default held in a variable): Bind takes a field's help from
// FlagHelp(field, tag), given the Go field name and its help tag.
type Helper interface {
	FlagHelp(field, tag string) string
}

// Bind binds the exported fields of the struct ptr points to. The
// struct's current values are the flags' defaults; a field's help is its
// help tag, or what FlagHelp makes of it when ptr is a Helper.
func Bind(ptr any) (*Set, error) {
	rv := reflect.ValueOf(ptr)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %T is not a pointer to a struct", ErrTag, ptr)
	}
	sv := rv.Elem()
	st := sv.Type()
	s := &Set{typ: st, byFlag: map[string]*Value{}, byName: map[string]*Value{}}
	for i := range st.NumField() {
		sf := st.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, ok := sf.Tag.Lookup("flag")
		if !ok {
			return nil, fmt.Errorf("%w: %s.%s has no flag tag (give `flag:\"-\"` to leave it out)", ErrTag, st.Name(), sf.Name)
		}
		if name == "-" {
			continue
		}
		if name == "" || s.byFlag[name] != nil {
			return nil, fmt.Errorf("%w: %s.%s: flag name %q empty or used twice", ErrTag, st.Name(), sf.Name, name)
		}
		if !supported(sf.Type) {
			return nil, fmt.Errorf("%w: %s.%s: type %s", ErrTag, st.Name(), sf.Name, sf.Type)
		}
		help := sf.Tag.Get("help")
		if h, ok := ptr.(Helper); ok {
			help = h.FlagHelp(sf.Name, help)
		}
		v := &Value{Flag: name, Field: sf.Name, Help: help, v: sv.Field(i)}
		s.values = append(s.values, v)
		s.byFlag[name], s.byName[sf.Name] = v, v
	}
	return s, nil
}

// MustBind is Bind for a struct known to bind (a type of this program);
// it panics otherwise.
func MustBind(ptr any) *Set {
	s, err := Bind(ptr)
	if err != nil {
		panic(err)
	}
	return s
}

func supported(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(textUnmarshaler) && t.Implements(textMarshaler) {
		return true
	}
	switch t.Kind() {
	case reflect.Int, reflect.Uint64, reflect.Float64, reflect.Bool, reflect.String:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Float64
	}
	return false
}

// Only returns the set of the named fields (Go field names) alone, in
// the struct's order, for a command that takes some of a struct's
// settings: its values are s's (a flag set on either is set on both).
// A name that s does not bind is an error wrapping ErrTag.
func (s *Set) Only(fields ...string) (*Set, error) {
	o := &Set{typ: s.typ, byFlag: map[string]*Value{}, byName: map[string]*Value{}}
	for _, f := range fields {
		v := s.byName[f]
		if v == nil {
			return nil, fmt.Errorf("%w: %s has no bound field %q", ErrTag, s.typ.Name(), f)
		}
		o.byFlag[v.Flag], o.byName[f] = v, v
	}
	for _, v := range s.values {
		if o.byName[v.Field] != nil {
			o.values = append(o.values, v)
		}
	}
	return o, nil
}

// Values returns the bound fields in the struct's order.
func (s *Set) Values() []*Value { return s.values }

// Lookup returns the field bound to a flag, or nil.
func (s *Set) Lookup(flag string) *Value { return s.byFlag[flag] }

// Field returns the value of the Go field name, or nil when it is not
// bound.
func (s *Set) Field(name string) *Value { return s.byName[name] }

// Changed reports whether the user set the flag (on the command line, or
// through a flag set's Set).
func (s *Set) Changed(flag string) bool {
	v := s.byFlag[flag]
	return v != nil && v.changed
}

// AddToGo registers every bound field on a standard library flag set.
func (s *Set) AddToGo(fs *flag.FlagSet) {
	for _, v := range s.values {
		if v.IsBool() {
			fs.Var(boolValue{v}, v.Flag, v.Help)
			continue
		}
		fs.Var(v, v.Flag, v.Help)
	}
}

// String returns the field's value as its flag takes it.
func (v *Value) String() string {
	if v == nil || !v.v.IsValid() {
		return ""
	}
	f := format(v.v)
	if v.changed && f == v.textOf {
		return v.text
	}
	return f
}

func format(rv reflect.Value) string {
	if m, ok := rv.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err != nil {
			return fmt.Sprint(rv.Interface())
		}
		return string(b)
	}
	switch rv.Kind() {
	case reflect.Int:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool())
	case reflect.String:
		return rv.String()
	case reflect.Slice:
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = FormatFloat(rv.Index(i).Float())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(rv.Interface())
}

// FormatFloat writes x as a list flag takes it: the shortest exact form,
// with exponents as 1e6 and 1e-6 rather than 1e+06.
func FormatFloat(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	s = strings.Replace(s, "e+0", "e", 1)
	s = strings.Replace(s, "e-0", "e-", 1)
	return strings.Replace(s, "e+", "e", 1)
}

// Set parses s into the field and records that the flag was set.
func (v *Value) Set(s string) error {
	if err := v.set(s); err != nil {
		return err
	}
	v.changed, v.text, v.textOf = true, s, format(v.v)
	return nil
}

func (v *Value) set(s string) error {
	p := reflect.New(v.v.Type())
	if u, ok := p.Interface().(encoding.TextUnmarshaler); ok {
		if err := u.UnmarshalText([]byte(s)); err != nil {
			return err
		}
		v.v.Set(p.Elem())
		return nil
	}
	switch v.v.Kind() {
	case reflect.Int:
		n, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if err != nil {
			return numError(err)
		}
		v.v.SetInt(n)
	case reflect.Uint64:
		n, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return numError(err)
		}
		v.v.SetUint(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return numError(err)
		}
		v.v.SetFloat(x)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return numError(err)
		}
		v.v.SetBool(b)
	case reflect.String:
		v.v.SetString(s)
	case reflect.Slice:
		var out []float64
		for _, f := range strings.Split(s, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", f)
			}
			out = append(out, x)
		}
		v.v.Set(reflect.ValueOf(out))
	}
	return nil
}

// numError is strconv's reason without its function name.
func numError(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

// Type names the flag's value in pflag's usage: the names pflag's own
// flags of the same Go types use.
func (v *Value) Type() string {
	if reflect.PointerTo(v.v.Type()).Implements(textUnmarshaler) {
		return "string"
	}
	switch v.v.Kind() {
	case reflect.Int:
		return "int"
	case reflect.Uint64:
		return "uint64"
	case reflect.Float64:
		return "float64"
	case reflect.Bool:
		return "bool"
	}
	return "string"
}

// IsBool reports whether the flag needs no value (--flag is
// --flag=true). (Value has no IsBoolFlag method: pflag takes any value
// that has one for a bool flag when it prints defaults.)
func (v *Value) IsBool() bool {
	return v.v.IsValid() && v.v.Kind() == reflect.Bool && !reflect.PointerTo(v.v.Type()).Implements(textUnmarshaler)
}

// boolValue is a bool flag of the standard library's flag package.
type boolValue struct{ *Value }

func (b boolValue) IsBoolFlag() bool { return true }

// FieldText returns field (a Go field name) of the struct s (or of the
// struct s points to) as its flag would write it: "1e6,1e7" for a list,
// an enumeration's name. It returns "" when s has no such field.
func FieldText(s any, field string) string {
	f := reflect.Indirect(reflect.ValueOf(s))
	if f.Kind() != reflect.Struct {
		return ""
	}
	if f = f.FieldByName(field); !f.IsValid() {
		return ""
	}
	return format(f)
}

// Interface returns the field's value.
func (v *Value) Interface() any { return v.v.Interface() }

// MismatchError is a flag the user set whose value differs from the one a
// configuration (a file's) has.
type MismatchError struct {
	Flag       string // the flag's name
	Want, Have string // the flag's value, and the configuration's
	What       string // what has it: "the model has"
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("--%s %s, but %s %s", e.Flag, e.Want, e.What, e.Have)
}

// Agree compares every flag the user set with the same field of have, a
// struct of the bound type (or a pointer to one), and returns a
// *MismatchError for the first that differs (in the struct's order); what
// says whose configuration have is ("the model has"). Values are compared
// as their flag text, so 1e6 and 1000000 agree.
func (s *Set) Agree(have any, what string) error {
	hv := reflect.Indirect(reflect.ValueOf(have))
	if !hv.IsValid() {
		return fmt.Errorf("%w: Agree with nil", ErrTag)
	}
	for _, v := range s.values {
		if !v.changed {
			continue
		}
		if hv.Type() != s.typ {
			return fmt.Errorf("%w: Agree with a %T, want a %s", ErrTag, have, s.typ)
		}
		hf := hv.FieldByName(v.Field)
		if want, got := format(v.v), format(hf); want != got {
			return &MismatchError{Flag: v.Flag, Want: want, Have: got, What: what}
		}
	}
	return nil
}
