package methods

import (
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

func TestParse(t *testing.T) {
	o := Options{FlyCL: flycl.Config{M: 100, P: 3, K: 30}}
	ms, err := Parse("flycl, NCM,baselines", o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	want := "Fly-CL,NCM,RanPAC (no FT),F-OAL,RanDumb,Joint ridge (upper bound)"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	all, err := Parse("all", o)
	if err != nil || len(all) != len(Groups["all"]) {
		t.Errorf("all: %d %v", len(all), err)
	}
	for _, m := range all {
		l, err := m.New(8, 1)
		if err != nil || l == nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	if _, err := Parse("flycl,nope", o); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown: %v", err)
	}
	if _, err := Parse(" , ", o); err == nil {
		t.Error("empty: no error")
	}
}
