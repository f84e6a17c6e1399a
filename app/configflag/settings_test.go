package configflag

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestReadSettings: each JSON value type becomes the flag text it stands
// for (numbers as written, so 1000000 is not "1e+06"), settings come in
// name order, and null, objects, nested lists, bad JSON and trailing data
// are *SettingsError with the problem named.
func TestReadSettings(t *testing.T) {
	for _, c := range []struct {
		json  string
		names []string
		texts []string
		err   string // from ReadSettings or Text
	}{
		{`{"online-batch": 1000000}`, []string{"online-batch"}, []string{"1000000"}, ""},
		{`{"online-lambda": 1e6}`, []string{"online-lambda"}, []string{"1e6"}, ""},
		{`{"lambdas": [1e4, 100000, "1e6"], "quiet": true}`, []string{"lambdas", "quiet"}, []string{"1e4,100000,1e6", "true"}, ""},
		{`{"tasks": 5, "m": 20, "b": "x"}`, []string{"b", "m", "tasks"}, []string{"x", "20", "5"}, ""},
		{`{}`, nil, nil, ""},
		{`{"out": null}`, nil, nil, "null: give a value"},
		{`{"order": {"a": 1}}`, nil, nil, "an object"},
		{`{"seeds": [[1, 2]]}`, nil, nil, "a list inside a list"},
		{`{"seeds": [null]}`, nil, nil, "null"},
		{`{"tasks": 5} {"m": 1}`, nil, nil, "data after the JSON object"},
		{`{"tasks": 5}}`, nil, nil, "data after the JSON object"},
		{`{"tasks": 5}]`, nil, nil, "data after the JSON object"},
		{"{\"tasks\": 5}\n\t ", []string{"tasks"}, []string{"5"}, ""},
		{`null`, nil, nil, "not null"},
		{`null}`, nil, nil, "data after the JSON object"},
		{`[1]`, nil, nil, "cannot unmarshal"},
		{`{"tasks": `, nil, nil, "unexpected EOF"},
	} {
		t.Run(c.json, func(t *testing.T) {
			ss, err := ReadSettings([]byte(c.json))
			var names, texts []string
			for _, s := range ss {
				if err != nil {
					break
				}
				var x string
				x, err = s.Text()
				names, texts = append(names, s.Name), append(texts, x)
			}
			if c.err != "" {
				var se *SettingsError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want a *SettingsError with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(names, "|") != strings.Join(c.names, "|") || strings.Join(texts, "|") != strings.Join(c.texts, "|") {
				t.Fatalf("got %q = %q, want %q = %q", names, texts, c.names, c.texts)
			}
		})
	}
}

// FuzzReadSettings: any bytes give settings or a *SettingsError, never a
// panic; a valid file's settings are its object's keys in name order, and
// a scalar's text, decoded again as JSON where it is a number or boolean,
// is the value encoding/json read (the independent reader).
func FuzzReadSettings(f *testing.F) {
	for _, s := range []string{`{"tasks": 5, "seeds": [1, 2, 3], "order": "pilot", "m": 2000}`,
		`{"online-batch": 1000000, "lambdas": [1e4, "1e5"], "quiet": true}`, `{"out": null}`, `[1]`, `{"m": {"x": []}}`, `{"a":1} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := ReadSettings(b)
		if err != nil {
			var se *SettingsError
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("ReadSettings accepted bytes that are not valid JSON")
		}
		var ref map[string]any
		if err := json.Unmarshal(b, &ref); err != nil {
			return // a number beyond float64, which flag text may still carry
		}
		if len(ss) != len(ref) {
			t.Fatalf("%d settings, the object has %d keys", len(ss), len(ref))
		}
		for i, s := range ss {
			if i > 0 && ss[i-1].Name >= s.Name {
				t.Fatalf("settings not in name order: %q before %q", ss[i-1].Name, s.Name)
			}
			x, err := s.Text()
			if err != nil {
				var se *SettingsError
				if !errors.As(err, &se) {
					t.Fatalf("Text error of type %T: %v", err, err)
				}
				continue
			}
			switch v := ref[s.Name].(type) {
			case float64, bool:
				var back any
				if err := json.Unmarshal([]byte(x), &back); err != nil || back != v {
					t.Fatalf("%s: text %q reads back as %v (%v), want %v", s.Name, x, back, err, v)
				}
			case string:
				if x != v {
					t.Fatalf("%s: text %q, want %q", s.Name, x, v)
				}
			}
		}
	})
}
