package watch

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestParseZoneModels(t *testing.T) {
	zones := []Zone{{Name: "gate"}, {Name: "car"}, {Name: "porch"}}
	for _, tc := range []struct {
		specs []string
		want  map[string]string // nil: an error
		why   string            // a word of the error's reason
	}{
		{specs: nil, want: map[string]string{}},
		{specs: []string{"gate=gate.flycl"}, want: map[string]string{"gate": "gate.flycl"}},
		{specs: []string{"gate=a.flycl", "car=b.flycl"}, want: map[string]string{"gate": "a.flycl", "car": "b.flycl"}},
		{specs: []string{"gate=a.flycl", "car=a.flycl"}, want: map[string]string{"gate": "a.flycl", "car": "a.flycl"}}, // one file, two zones
		{specs: []string{"gate=dir/x=y.flycl"}, want: map[string]string{"gate": "dir/x=y.flycl"}},                      // the first = splits
		{specs: []string{"gate"}, why: "NAME=FILE"},
		{specs: []string{"=a.flycl"}, why: "NAME=FILE"},
		{specs: []string{"gate="}, why: "NAME=FILE"},
		{specs: []string{"door=a.flycl"}, why: `no --zone is named "door"`},
		{specs: []string{"Gate=a.flycl"}, why: "no --zone"}, // names are case-sensitive
		{specs: []string{"gate=a.flycl", "gate=b.flycl"}, why: "has a model already (a.flycl)"},
	} {
		got, err := ParseZoneModels(tc.specs, zones)
		if tc.want == nil {
			var zerr *ZoneModelError
			if !errors.As(err, &zerr) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("%q: got %v, %v; want a ZoneModelError saying %q", tc.specs, got, err, tc.why)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.specs, got, err, tc.want)
		}
	}
}

// FuzzParseZoneModels: any specs give a ZoneModelError or a map from
// zones' names to the non-empty text after their spec's first "=", never
// a panic.
func FuzzParseZoneModels(f *testing.F) {
	for _, s := range []string{"gate=gate.flycl", "car=a\x00b", "=", "gate=", "door=x", "gate=a\ngate=b", ""} {
		f.Add(s)
	}
	zones := []Zone{{Name: "gate"}, {Name: "car"}}
	f.Fuzz(func(t *testing.T, s string) {
		specs := strings.Split(s, "\n")
		got, err := ParseZoneModels(specs, zones)
		if err != nil {
			var zerr *ZoneModelError
			if !errors.As(err, &zerr) {
				t.Fatalf("%q: error %v is not a ZoneModelError", specs, err)
			}
			return
		}
		if len(got) != len(specs) {
			t.Fatalf("%q: %d zones from %d specs", specs, len(got), len(specs))
		}
		for _, sp := range specs {
			name, file, _ := strings.Cut(sp, "=")
			if got[name] != file || file == "" || (name != "gate" && name != "car") {
				t.Fatalf("%q: %q gives %q, want %q of a zone", specs, sp, got[name], file)
			}
		}
	})
}
