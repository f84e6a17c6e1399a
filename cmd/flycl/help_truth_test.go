package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/cmd/internal/clitest"
)

// helpOf is "flycl help CMD" as printed.
func helpOf(t *testing.T, name string) string {
	t.Helper()
	root := newRoot()
	c, _, err := root.Find([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	c.SetOut(&b)
	if err := c.Help(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// flagLine is the help line of --name in help.
func flagLine(t *testing.T, help, name string) string {
	t.Helper()
	for _, l := range strings.Split(help, "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "--"+name || len(f) > 1 && f[1] == "--"+name) {
			return l
		}
	}
	t.Fatalf("no --%s in the help:\n%s", name, help)
	return ""
}

// TestHelpDefaultsArePhotoLearns: a learn of photos with no model flag
// records the configuration that "flycl help learn" and "help serve" print
// as the photos' defaults (m, k, p for the default backbone's d, the λ
// grid and its scale), and the defaults they print for feature vectors are
// flycl.DefaultConfig's; no flag of the model group prints a bare default
// of one input alone.
func TestHelpDefaultsArePhotoLearns(t *testing.T) {
	lib, err := filepath.Abs(ortLib(t))
	if err != nil {
		t.Fatal(err)
	}
	train := t.TempDir()
	shapeImages(t, train, 2, 1, "jpg")
	model := filepath.Join(t.TempDir(), "cam.flycl")
	if out, err := runCLI(t, "learn", "--model", model, "--data", "folder:"+train, "--ort-lib", lib, "--cache", "", "--quiet"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	f, err := store.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Snapshot.Predictor()
	got, d := p.Config(), p.InputDim()
	if d != defaultBackboneDim {
		t.Errorf("the default backbone's features are %d-dimensional, the help says %d", d, defaultBackboneDim)
	}
	feat := flycl.DefaultConfig()
	lambdas := make([]string, len(got.Lambdas))
	for i, v := range got.Lambdas {
		lambdas[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, cmd := range []string{"learn", "serve"} {
		help := helpOf(t, cmd)
		for _, tc := range []struct {
			flag, photos, other string
			same                bool // the two inputs' defaults agree: one bare default is the truth
		}{
			{"m", strconv.Itoa(got.M), strconv.Itoa(feat.M), got.M == feat.M},
			{"k", strconv.Itoa(got.K), strconv.Itoa(feat.K), got.K == feat.K},
			{"p", fmt.Sprintf("%d for", got.P), strconv.Itoa(feat.P), false},
			{"lambdas", strings.Join(lambdas, ","), "feature vectors and research runs " + floats(feat.Lambdas), false},
			{"lambda-scale", got.LambdaScale.String(), feat.LambdaScale.String(), false},
			{"dual", strconv.Itoa(got.Dual), strconv.Itoa(feat.Dual), got.Dual == feat.Dual},
		} {
			l := flagLine(t, help, tc.flag)
			if tc.same {
				if !strings.Contains(l, "(default "+tc.photos+")") {
					t.Errorf("%s --%s: %q\nwant the one default %s (what the learn recorded, and the research runs' too)", cmd, tc.flag, l, tc.photos)
				}
				continue
			}
			if !strings.Contains(l, "(default: photos "+tc.photos) || !strings.Contains(l, tc.other) {
				t.Errorf("%s --%s: %q\nwant photos %s (what the learn recorded) and %s", cmd, tc.flag, l, tc.photos, tc.other)
			}
			if strings.Contains(l, "(default "+tc.other+")") {
				t.Errorf("%s --%s: a bare default: %q", cmd, tc.flag, l)
			}
		}
		if !strings.Contains(help, groupAdvanced+":") || strings.Index(help, groupAdvanced) < strings.Index(help, groupModel) {
			t.Errorf("%s: the advanced flags are not under their own heading after the model's:\n%s", cmd, help)
		}
		for _, research := range []string{"gcv", "gcv-scope", "projection", "topk"} {
			if strings.Index(help, "--"+research+" ") < strings.Index(help, groupAdvanced) {
				t.Errorf("%s: --%s is not under %q", cmd, research, groupAdvanced)
			}
		}
	}
}

// TestHelpExamplesParse: every example line of every command's help names
// a command that exists, with flags it has and values they take
// (clitest.ExamplesParse).
func TestHelpExamplesParse(t *testing.T) {
	clitest.ExamplesParse(t, "flycl", newRoot)
}
