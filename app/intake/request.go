package intake

import (
	"context"
	"errors"
	"fmt"

	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/fielderr"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// ErrOptionUnused is wrapped by an InputError for an option that does not
// apply to the input given (a backbone option or class names).
var ErrOptionUnused = errors.New("intake: option does not apply to the input")

// ErrNothingLearned is wrapped by an InputError when images of labelled
// samples cannot be read and InputRequest.SkipBad is not set: the whole
// input is refused.
var ErrNothingLearned = errors.New("intake: images cannot be read; nothing was learned")

// InputRequest is what a model command is asked to read its samples from,
// as given, before anything is opened: exactly one of image files, a data
// set and a feature file, with the options that apply to each. Check
// applies the rules; Open turns the request into InputOptions and opens
// the input; Refuse applies the rule on unreadable images to what
// Input.Shard returns. A field's flag (or arg) tag is the model commands'
// flag (positional argument) for it (internal/flagbind.Names: how they
// name the field in an InputError).
type InputRequest struct {
	// Files are image files without labels.
	Files []string `arg:"IMAGE..."`
	// Data is a data set as KIND:PATH, resolved by ParseData (nil:
	// dataset.ParseSpec), and Split the split to read.
	Data      string `flag:"data"`
	ParseData func(string) (dataset.Spec, error)
	Split     string
	// Features is a feature file, and ClassNames (nil: the file's) the
	// names of its labels; they apply to Features only.
	Features   string   `flag:"features"`
	ClassNames []string `flag:"class-names"`
	// Backbone is the backbone asked for ("": the model's): without one a
	// grey data set is read as raw pixels when Pixels is set (PixelsInput).
	Backbone string
	// BackboneOptions are the options given that apply only to images
	// through a backbone, by name ("Precision", "Calib", "CalibMethod"):
	// refused with Features.
	BackboneOptions []string
	// Labelled says the samples must have labels (learn, forget, stats:
	// no Files), Pixels that a grey data set may be read as raw pixels
	// (stats).
	Labelled, Pixels bool
	// SkipBad leaves out the images that cannot be read (InputOptions);
	// without it they refuse labelled samples whole (Refuse).
	SkipBad bool `flag:"skip-bad"`
}

// InputError is an InputRequest refused by its rules. Field is the field
// of InputRequest at fault; the message names fields through Name (nil:
// by their Go names), which a command sets to say its flags instead. It
// is the one field error type of the module (internal/fielderr): Rule is
// ErrNoInput, ErrOptionUnused or ErrNothingLearned, and Err, with
// ErrNothingLearned, the error of the unreadable images (a
// *BadFilesError: an input error, flycl.IsInput).
type InputError = fielderr.Error

// inputErr is the request refused by rule at field: labelled and pixels
// say which inputs it takes (ErrNoInput), bad and other the unreadable
// images and the count of the others (ErrNothingLearned).
func inputErr(field string, rule error, labelled, pixels bool, bad error, other int) *InputError {
	return &InputError{Field: field, Rule: rule, Err: bad, Message: func(e *InputError) string {
		name := e.NameOf
		switch {
		case rule == ErrNoInput && pixels:
			return fmt.Sprintf("give exactly one of %s KIND:PATH (or mnist / fashion-mnist pixels) or %s FILE.npz", name("Data"), name("Features"))
		case rule == ErrNoInput && labelled:
			return fmt.Sprintf("give exactly one of %s KIND:PATH (with a backbone) or %s FILE.npz", name("Data"), name("Features"))
		case rule == ErrNoInput:
			return fmt.Sprintf("give exactly one of %s, %s KIND:PATH or %s FILE.npz", name("Files"), name("Data"), name("Features"))
		case rule == ErrOptionUnused && field == "ClassNames":
			return fmt.Sprintf("%s applies to %s only (a data set names its classes)", name("ClassNames"), name("Features"))
		case rule == ErrOptionUnused:
			return fmt.Sprintf("%s applies to images through a backbone, not to %s", name(field), name("Features"))
		case rule == ErrNothingLearned:
			return fmt.Sprintf("%v\nnothing was learned: remove or fix them, or give %s to learn the other %d", bad, name("SkipBad"), other)
		}
		return rule.Error()
	}}
}

// Check applies the request's rules: exactly one of Files, Data and
// Features (ErrNoInput); no backbone option with Features and no
// ClassNames without it (ErrOptionUnused). The errors are *InputError.
func (r *InputRequest) Check() error {
	given := 0
	for _, b := range []bool{len(r.Files) > 0, r.Data != "", r.Features != ""} {
		if b {
			given++
		}
	}
	if given != 1 {
		field := "Files"
		if r.Labelled || r.Pixels {
			field = "Data"
		}
		return inputErr(field, ErrNoInput, r.Labelled, r.Pixels, nil, 0)
	}
	switch {
	case r.Features != "":
		if len(r.BackboneOptions) > 0 {
			return inputErr(r.BackboneOptions[0], ErrOptionUnused, false, false, nil, 0)
		}
	case r.ClassNames != nil:
		return inputErr("ClassNames", ErrOptionUnused, false, false, nil, 0)
	}
	return nil
}

// Options checks the request (Check) and returns the InputOptions it
// names for a model with pipeline mp (trained: it has learned classes),
// Data resolved by ParseData.
func (r *InputRequest) Options(mp *modelfile.Pipeline, trained bool) (InputOptions, error) {
	if err := r.Check(); err != nil {
		return InputOptions{}, err
	}
	o := InputOptions{Features: r.Features, ClassNames: r.ClassNames, Split: r.Split, Files: r.Files, Model: mp, Trained: trained, SkipBad: r.SkipBad}
	if r.Data != "" {
		parse := r.ParseData
		if parse == nil {
			parse = dataset.ParseSpec
		}
		spec, err := parse(r.Data)
		if err != nil {
			return InputOptions{}, err
		}
		o.Data = spec
		o.Pixels = r.Pixels && PixelsInput(spec, r.Backbone, mp)
	}
	return o, nil
}

// Open opens the input the request names for a model with pipeline mp
// (Options, then OpenInput).
func (r *InputRequest) Open(mp *modelfile.Pipeline, trained bool) (*Input, error) {
	o, err := r.Options(mp, trained)
	if err != nil {
		return nil, err
	}
	return OpenInput(o)
}

// Refuse applies the rule on unreadable images to err, what reading the
// input's samples returned: images of labelled samples that cannot be
// read (a *BadFilesError) refuse the whole input unless SkipBad is set,
// an *InputError wrapping ErrNothingLearned and err. Other errors, and
// nil, are returned as they are.
func (r *InputRequest) Refuse(err error) error {
	var bad *BadFilesError
	if errors.As(err, &bad) && !r.SkipBad && r.Labelled {
		return inputErr("SkipBad", ErrNothingLearned, false, false, err, bad.Total-len(bad.Files))
	}
	return err
}

// Loaded are the samples of a request, read whole (InputRequest.Load).
type Loaded struct {
	*Samples
	// Names are the class name of every sample; nil for Files.
	Names []string
	// Desc describes the input for messages: Input.Desc, or for a data
	// set the request's Data "through" the backbone's name.
	Desc string
}

// LoadNotes are told what loading noticed; a nil field drops it.
type LoadNotes struct {
	// Warning is each of Input.Warnings.
	Warning func(string)
	// Skipped are the files of a data set that are not images by their
	// extension (Input.Skipped).
	Skipped func(paths []string)
	// Cached: the features of the images came from the extractor's cache.
	Cached func(backbone string, n int)
	// Bad are the images of labelled samples left out with SkipBad.
	Bad func(*BadFilesError)
	// Extracting is told the dimension of the images' features once the
	// extractor is open, before the first image is read: what needs only
	// that (a new model's W: store.Store.Extracting) can be made while
	// they are extracted.
	Extracting func(d int)
}

// Load opens the input the request names for a model with pipeline mp
// (Open; trained: the model has learned classes) and reads all of it:
// images through the extractor that extractor opens (called only for
// images), unreadable images under Refuse's rule, and the class name of
// every labelled sample (Input.Names; its errors prefixed with the
// feature file).
func (r *InputRequest) Load(ctx context.Context, mp *modelfile.Pipeline, trained bool, extractor func() (*extract.Extractor, error), n LoadNotes) (*Loaded, error) {
	in, err := r.Open(mp, trained)
	if err != nil {
		return nil, err
	}
	if n.Warning != nil {
		for _, w := range in.Warnings {
			n.Warning(w)
		}
	}
	if sk := in.Skipped(); len(sk) > 0 && n.Skipped != nil {
		n.Skipped(sk)
	}
	var e *extract.Extractor
	if in.Images() {
		if e, err = extractor(); err != nil {
			return nil, r.Refuse(err)
		}
		if n.Extracting != nil {
			n.Extracting(e.Dim())
		}
	}
	s, err := in.Shard(ctx, e, 0, 1)
	if err != nil {
		return nil, r.Refuse(err)
	}
	if s.Cached && n.Cached != nil {
		n.Cached(e.Backbone.Name, s.N)
	}
	if len(s.Bad) > 0 && r.Labelled && n.Bad != nil {
		n.Bad(&BadFilesError{Files: s.Bad, Total: s.N + len(s.Bad)})
	}
	l := &Loaded{Samples: s, Desc: in.Desc}
	if len(r.Files) > 0 {
		return l, nil
	}
	if e != nil {
		l.Desc = fmt.Sprintf("%s through %s", r.Data, e.Backbone.Name)
	}
	if l.Names, err = in.Names(s.Labels); err != nil {
		if r.Features != "" {
			err = fmt.Errorf("%s: %w", r.Features, err)
		}
		return nil, err
	}
	return l, nil
}
