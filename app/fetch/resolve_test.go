package fetch

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// TestResolve: the assets are the catalogue's, in the order named; a
// mirror replaces the one asset's URLs and needs exactly one name.
func TestResolve(t *testing.T) {
	cat := Catalogue()
	if len(cat) < 2 {
		t.Fatalf("catalogue of %d assets", len(cat))
	}
	a, b := cat[len(cat)-1], cat[0]
	got, err := Resolve([]string{a.Name, b.Name}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != a.Name || got[1].Name != b.Name || !slices.Equal(got[0].URLs, a.URLs) {
		t.Fatalf("Resolve = %+v", got)
	}
	got, err = Resolve([]string{b.Name}, "https://mirror.example/x")
	if err != nil || len(got) != 1 || !slices.Equal(got[0].URLs, []string{"https://mirror.example/x"}) || got[0].File != b.File {
		t.Fatalf("mirror: %+v, %v", got, err)
	}
	if _, err := Resolve([]string{a.Name, b.Name}, "https://m/x"); err == nil || !strings.Contains(err.Error(), "got 2") {
		t.Fatalf("two names with --url: %v", err)
	}
	if _, err := Resolve(nil, "https://m/x"); err == nil || !strings.Contains(err.Error(), "got 0") {
		t.Fatalf("no name with --url: %v", err)
	}
	if _, err := Resolve([]string{a.Name, "nope"}, ""); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown name: %v", err)
	}
	if cat[0].URLs != nil && len(cat[0].URLs) > 0 && cat[0].URLs[0] == "https://mirror.example/x" {
		t.Fatal("the mirror changed the catalogue")
	}
}

// TestFlagName: the flag an asset is printed with reads the value
// printed with it: --backbone's parser (extract.ParseBackbone) takes
// every weights asset's Flag, --data's (dataset.ParseSpec) every data
// set's, and each refuses the other kind's.
func TestFlagName(t *testing.T) {
	n := 0
	for _, a := range Catalogue() {
		v := a.Flag("dir")
		if v == "" {
			continue
		}
		n++
		_, berr := extract.ParseBackbone(v)
		_, derr := dataset.ParseSpec(v)
		switch a.FlagName() {
		case "backbone":
			if berr != nil || derr == nil {
				t.Errorf("%s: --backbone %s: %v; as --data: %v", a.Name, v, berr, derr)
			}
		case "data":
			if derr != nil || berr == nil {
				t.Errorf("%s: --data %s: %v; as --backbone: %v", a.Name, v, derr, berr)
			}
		default:
			t.Errorf("%s: flag %q", a.Name, a.FlagName())
		}
	}
	if n == 0 {
		t.Fatal("no asset with a flag")
	}
}
