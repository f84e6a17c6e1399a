package server

import (
	"reflect"
	"testing"
)

// TestConfigDefaults checks every numeric limit of Config against
// DefaultConfig: a zero or negative value takes the default (so a field
// added to Config but forgotten in withDefaults fails here), a positive one
// is kept.
func TestConfigDefaults(t *testing.T) {
	d := reflect.ValueOf(DefaultConfig())
	typ := d.Type()
	n := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		if k := f.Type.Kind(); k != reflect.Int && k != reflect.Int64 {
			continue
		}
		n++
		if d.Field(i).Int() <= 0 {
			t.Errorf("DefaultConfig().%s = %d, want a positive default", f.Name, d.Field(i).Int())
		}
		for _, tc := range []struct {
			set, want int64
		}{{0, d.Field(i).Int()}, {-1, d.Field(i).Int()}, {7, 7}} {
			var c Config
			reflect.ValueOf(&c).Elem().Field(i).SetInt(tc.set)
			got := reflect.ValueOf(c.withDefaults()).Field(i).Int()
			if got != tc.want {
				t.Errorf("%s = %d: withDefaults gives %d, want %d", f.Name, tc.set, got, tc.want)
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d numeric fields seen in Config", n)
	}
	if (Config{}).withDefaults().Logger == nil {
		t.Error("withDefaults left Logger nil")
	}
}
