package intake

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"errors"
	"fmt"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/extract"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/dataset"
)

// flagName names the fields as flycl's commands do (cmd/flycl's
// inputFlagOf), so that the messages below are the commands' own.
func flagName(field string) string {
	return map[string]string{"Files": "IMAGE...", "Data": "--data", "Features": "--features", "ClassNames": "--class-names",
		"SkipBad": "--skip-bad", "Precision": "--precision", "Calib": "--calib", "CalibMethod": "--calib-method"}[field]
}

func TestInputRequestCheck(t *testing.T) {
	for _, c := range []struct {
		name  string
		r     InputRequest
		err   error  // nil: accepted
		field string // the InputError's Field
		msg   string // its message naming flags (flagName)
		plain string // its message naming fields (Name nil)
	}{
		{"features", InputRequest{Features: "f.npz", Labelled: true}, nil, "", "", ""},
		{"data", InputRequest{Data: "folder:d", Labelled: true}, nil, "", "", ""},
		{"files", InputRequest{Files: []string{"a.png"}}, nil, "", "", ""},
		{"features with class names", InputRequest{Features: "f.npz", ClassNames: []string{"a"}}, nil, "", "", ""},
		{"data with backbone options", InputRequest{Data: "folder:d", BackboneOptions: []string{"Precision"}}, nil, "", "", ""},
		{"none, labelled", InputRequest{Labelled: true}, ErrNoInput, "Data",
			"give exactly one of --data KIND:PATH (with a backbone) or --features FILE.npz",
			"give exactly one of Data KIND:PATH (with a backbone) or Features FILE.npz"},
		{"two, labelled", InputRequest{Data: "folder:d", Features: "f.npz", Labelled: true}, ErrNoInput, "Data",
			"give exactly one of --data KIND:PATH (with a backbone) or --features FILE.npz", ""},
		{"none, pixels", InputRequest{Labelled: true, Pixels: true}, ErrNoInput, "Data",
			"give exactly one of --data KIND:PATH (or mnist / fashion-mnist pixels) or --features FILE.npz", ""},
		{"none, unlabelled", InputRequest{}, ErrNoInput, "Files",
			"give exactly one of IMAGE..., --data KIND:PATH or --features FILE.npz",
			"give exactly one of Files, Data KIND:PATH or Features FILE.npz"},
		{"three", InputRequest{Files: []string{"a.png"}, Data: "folder:d", Features: "f.npz"}, ErrNoInput, "Files",
			"give exactly one of IMAGE..., --data KIND:PATH or --features FILE.npz", ""},
		{"features with precision", InputRequest{Features: "f.npz", BackboneOptions: []string{"Precision"}}, ErrOptionUnused, "Precision",
			"--precision applies to images through a backbone, not to --features",
			"Precision applies to images through a backbone, not to Features"},
		{"features with calibration: the first named", InputRequest{Features: "f.npz", BackboneOptions: []string{"Calib", "CalibMethod"}}, ErrOptionUnused, "Calib",
			"--calib applies to images through a backbone, not to --features", ""},
		{"data with class names", InputRequest{Data: "folder:d", ClassNames: []string{"a", "b"}}, ErrOptionUnused, "ClassNames",
			"--class-names applies to --features only (a data set names its classes)",
			"ClassNames applies to Features only (a data set names its classes)"},
		{"files with class names", InputRequest{Files: []string{"a.png"}, ClassNames: []string{"a"}}, ErrOptionUnused, "ClassNames",
			"--class-names applies to --features only (a data set names its classes)", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.r.Check()
			if c.err == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, c.err) {
				t.Fatalf("error %v (%T), want an *InputError wrapping %v", err, err, c.err)
			}
			if ie.Field != c.field {
				t.Errorf("field %q, want %q", ie.Field, c.field)
			}
			if c.plain != "" && err.Error() != c.plain {
				t.Errorf("message %q, want %q", err.Error(), c.plain)
			}
			ie.Name = flagName
			if err.Error() != c.msg {
				t.Errorf("message %q, want %q", err.Error(), c.msg)
			}
			if flycl.IsInput(err) {
				t.Errorf("%v is an input error: the flags, not the data, are at fault", err)
			}
			if _, err := c.r.Open(nil, false); !errors.Is(err, c.err) {
				t.Errorf("Open: %v, want %v as Check", err, c.err)
			}
		})
	}
}

func TestInputRequestOptions(t *testing.T) {
	mp := &modelfile.Pipeline{Backbone: "squeezenet"}
	parsed := 0
	parse := func(s string) (dataset.Spec, error) { parsed++; return dataset.ParseSpec(s) }
	for _, c := range []struct {
		name    string
		r       InputRequest
		mp      *modelfile.Pipeline
		pixels  bool
		data    dataset.Spec
		classes []string
	}{
		{"grey, pixels asked, no backbone", InputRequest{Data: "mnist:/m", Pixels: true, Labelled: true}, nil, true, dataset.Spec{Kind: "mnist", Path: "/m"}, nil},
		{"grey, pixels not asked", InputRequest{Data: "mnist:/m", Labelled: true}, nil, false, dataset.Spec{Kind: "mnist", Path: "/m"}, nil},
		{"grey through a backbone", InputRequest{Data: "mnist:/m", Pixels: true, Backbone: "squeezenet"}, nil, false, dataset.Spec{Kind: "mnist", Path: "/m"}, nil},
		{"grey for a model with a backbone", InputRequest{Data: "mnist:/m", Pixels: true}, mp, false, dataset.Spec{Kind: "mnist", Path: "/m"}, nil},
		{"colour", InputRequest{Data: "folder:/d", Pixels: true}, nil, false, dataset.Spec{Kind: "folder", Path: "/d"}, nil},
		{"features", InputRequest{Features: "f.npz", ClassNames: []string{"x", "y"}}, nil, false, dataset.Spec{}, []string{"x", "y"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.r.ParseData, c.r.Split, c.r.SkipBad = parse, "train", true
			before := parsed
			o, err := c.r.Options(c.mp, true)
			if err != nil {
				t.Fatal(err)
			}
			if o.Pixels != c.pixels || o.Data != c.data || !slices.Equal(o.ClassNames, c.classes) {
				t.Errorf("pixels %v data %+v class names %q, want %v %+v %q", o.Pixels, o.Data, o.ClassNames, c.pixels, c.data, c.classes)
			}
			if o.Features != c.r.Features || o.Split != "train" || !o.SkipBad || o.Model != c.mp || !o.Trained {
				t.Errorf("options %+v do not carry the request's", o)
			}
			if want := before + map[bool]int{true: 1}[c.r.Data != ""]; parsed != want {
				t.Errorf("ParseData called %d times, want %d", parsed-before, want-before)
			}
		})
	}
	want := errors.New("no such data set")
	if _, err := (&InputRequest{Data: "x", ParseData: func(string) (dataset.Spec, error) { return dataset.Spec{}, want }}).Options(nil, false); err != want {
		t.Errorf("ParseData's error: %v, want it as it is", err)
	}
}

func TestInputRequestRefuse(t *testing.T) {
	bad := &BadFilesError{Files: []BadFile{{Path: "d/a/x.png", Err: errors.New("unknown image format")}}, Total: 13}
	wrapped := fmt.Errorf("learn: %w", bad)
	other := errors.New("disk full")
	for _, c := range []struct {
		name     string
		r        InputRequest
		err      error
		refused  bool // an *InputError naming SkipBad
		sameErr  bool // err returned as it is
		wantText string
	}{
		{"labelled, refuse", InputRequest{Labelled: true}, bad, true, false,
			"1 of 13 images cannot be read:\n  d/a/x.png: unknown image format\nnothing was learned: remove or fix them, or give --skip-bad to learn the other 12"},
		{"labelled, wrapped", InputRequest{Labelled: true}, wrapped, true, false,
			"learn: 1 of 13 images cannot be read:\n  d/a/x.png: unknown image format\nnothing was learned: remove or fix them, or give --skip-bad to learn the other 12"},
		{"labelled, skip bad", InputRequest{Labelled: true, SkipBad: true}, bad, false, true, ""},
		{"unlabelled (predict)", InputRequest{}, bad, false, true, ""},
		{"another error", InputRequest{Labelled: true}, other, false, true, ""},
		{"no error", InputRequest{Labelled: true}, nil, false, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.r.Refuse(c.err)
			if c.sameErr && got != c.err {
				t.Fatalf("Refuse(%v) = %v, want it unchanged", c.err, got)
			}
			if !c.refused {
				return
			}
			var ie *InputError
			if !errors.As(got, &ie) || ie.Field != "SkipBad" || !errors.Is(got, ErrNothingLearned) {
				t.Fatalf("Refuse(%v) = %v, want an *InputError on SkipBad wrapping ErrNothingLearned", c.err, got)
			}
			var be *BadFilesError
			if !errors.As(got, &be) || be != bad || !flycl.IsInput(got) {
				t.Errorf("the refusal does not wrap the bad files (an input error)")
			}
			ie.Name = flagName
			if got.Error() != c.wantText {
				t.Errorf("message %q, want %q", got.Error(), c.wantText)
			}
		})
	}
}

// TestInputRequestLoadFeatures: a feature file loads whole, every sample
// named by its label's class name (as written), the file's warning told
// before anything is read; a label without a name is refused naming the
// file; no extractor is opened for features.
func TestInputRequestLoadFeatures(t *testing.T) {
	dir := t.TempDir()
	names := []string{"cat", "dog", "owl"}
	path := blobFile(t, dir, "f.npz", 3, 30, 8, names, nil)
	noExtractor := func() (*extract.Extractor, error) { t.Fatal("extractor opened for features"); return nil, nil }
	var warnings []string
	r := &InputRequest{Features: path, Labelled: true}
	l, err := r.Load(context.Background(), testPipeline("squeezenet", "abc", 8), false, noExtractor, LoadNotes{Warning: func(w string) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	set, err := features.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.N != 30 || l.D != 8 || !slices.Equal(l.X, set.X) || l.Desc != "features "+path {
		t.Errorf("loaded %d×%d %q, want the file's 30×8 as \"features %s\"", l.N, l.D, l.Desc, path)
	}
	for i, n := range l.Names {
		if n != names[i%3] {
			t.Fatalf("sample %d named %q, want %q", i, n, names[i%3])
		}
	}
	if len(l.Names) != 30 || len(warnings) != 1 || !strings.Contains(warnings[0], "records no pipeline identity") {
		t.Errorf("%d names, warnings %q: want 30 names and the file's one warning", len(l.Names), warnings)
	}
	// two names for three labels: the third is refused, naming the file
	r.ClassNames = []string{"cat", "dog"}
	if _, err := r.Load(context.Background(), nil, false, noExtractor, LoadNotes{}); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("a label without a name: %v, want an error naming %s", err, path)
	}
	// the rules first: nothing is read
	if _, err := (&InputRequest{Features: path, BackboneOptions: []string{"Calib"}}).Load(context.Background(), nil, false, noExtractor, LoadNotes{}); !errors.Is(err, ErrOptionUnused) {
		t.Errorf("features with a calibration option: %v, want ErrOptionUnused", err)
	}
}

// TestInputRequestLoadBadImages: a folder with an unreadable image is
// refused whole for labelled samples (ErrNothingLearned, naming the file
// and the count of the others), and with SkipBad loads the others, the
// left-out one told to Bad; files that are not images are told to Skipped.
func TestInputRequestLoadBadImages(t *testing.T) {
	e := builtinSqueezeNet(t)
	dir := t.TempDir()
	for f, b := range map[string][]byte{"a/1.png": encoded(t, 1, "png"), "a/2.jpg": encoded(t, 2, "jpg"), "b/1.png": encoded(t, 3, "png"),
		"b/bad.png": []byte("not a png"), "b/notes.txt": []byte("x")} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opened := 0
	open := func() (*extract.Extractor, error) { opened++; return e, nil }
	r := &InputRequest{Data: "folder:" + dir, Split: "train", Labelled: true}
	var skipped []string
	var bad *BadFilesError
	var extracting []int // the dimensions told before extracting
	notes := LoadNotes{Skipped: func(p []string) { skipped = p }, Bad: func(b *BadFilesError) { bad = b },
		Extracting: func(d int) { extracting = append(extracting, d) }}
	_, err := r.Load(context.Background(), nil, false, open, notes)
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNothingLearned) || !flycl.IsInput(err) || !strings.Contains(err.Error(), filepath.Join(dir, "b/bad.png")) ||
		!strings.HasSuffix(err.Error(), "give SkipBad to learn the other 3") {
		t.Fatalf("an unreadable image: %v, want ErrNothingLearned naming it and the 3 others", err)
	}
	if !slices.Equal(skipped, []string{filepath.Join(dir, "b/notes.txt")}) {
		t.Errorf("skipped %q, want notes.txt", skipped)
	}
	// told before the extraction that failed
	if !slices.Equal(extracting, []int{e.Dim()}) {
		t.Errorf("Extracting told %v, want the extractor's dimension %d once", extracting, e.Dim())
	}
	r.SkipBad = true
	l, err := r.Load(context.Background(), nil, false, open, notes)
	if err != nil {
		t.Fatal(err)
	}
	if l.N != 3 || !slices.Equal(l.Names, []string{"a", "a", "b"}) || bad == nil || bad.Total != 4 || len(bad.Files) != 1 || opened != 2 {
		t.Errorf("loaded %d named %q, bad %+v, extractor opened %d times: want 3 (a a b), 1 of 4 bad, 2", l.N, l.Names, bad, opened)
	}
	if !slices.Equal(extracting, []int{e.Dim(), e.Dim()}) || l.D != e.Dim() {
		t.Errorf("Extracting told %v, features of d=%d; want the extractor's dimension %d, once per load", extracting, l.D, e.Dim())
	}
	if want := "folder:" + dir + " through " + e.Backbone.Name; l.Desc != want {
		t.Errorf("desc %q, want %q", l.Desc, want)
	}
	// the extractor's error is returned as it is
	boom := errors.New("no backbone")
	if _, err := r.Load(context.Background(), nil, false, func() (*extract.Extractor, error) { return nil, boom }, notes); err != boom {
		t.Errorf("extractor error: %v, want %v", err, boom)
	}
}
