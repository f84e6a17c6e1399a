package flagbind

import "reflect"

// Names returns, for the structs given (or pointers to them), the name on
// the command line of each field that carries a flag tag, by the field's
// path as the structs' error types name it ("Model", "MQTT.User": the
// fields of a struct field follow its name and a dot): "--" and the
// tag's flag, or for a positional argument the field's arg tag as it is
// ("IMAGE..."). A field of the structs given earlier wins. It is how a
// command names the fields of a library's settings in that library's
// field errors (internal/fielderr.Error.Name) and tells which were given
// (a flag set's Changed, of the name without its dashes), with no list of
// its own.
func Names(structs ...any) map[string]string {
	names := map[string]string{}
	for _, s := range structs {
		t := reflect.TypeOf(s)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != nil && t.Kind() == reflect.Struct {
			addNames(names, t, "")
		}
	}
	return names
}

func addNames(names map[string]string, t reflect.Type, prefix string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		path := prefix + f.Name
		if _, done := names[path]; !done {
			if flag, ok := f.Tag.Lookup("flag"); ok && flag != "" && flag != "-" {
				names[path] = "--" + flag
			} else if arg, ok := f.Tag.Lookup("arg"); ok && arg != "" {
				names[path] = arg
			}
		}
		if f.Type.Kind() == reflect.Struct && !f.Anonymous {
			addNames(names, f.Type, path+".")
		}
	}
}
