package server

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/fielderr"
	"github.com/flycl/flycl/vision/backbone"
)

// Options are what a served model is started from (Start): the options
// of flycl serve, as given. Check applies the rules of their values,
// CheckReadOnly those of a read-only server; Start applies them and the
// rules between the options and the model file, then opens the model,
// its backbone and inbox, and listens.
//
// An option refused is an *OptionError naming its field as Options
// names it, dotted for a field of a field ("Dim", "Config.QueueLength",
// "Timeouts.Read", "Lock.Wait", "Inbox.MaxItems"), which a command maps
// to its flags (OptionError.Name).
type Options struct {
	// Model is the model file; Addr the address to listen on (HOST:PORT).
	Model string `flag:"model"`
	Addr  string `flag:"addr"`
	// Config are the server's limits and rules (New). Start sets its
	// Backend, Extractor, Token, TokenForAll, Inbox, InboxPolicy and
	// Logger. Its DecodePixels -1 means no bound (math.MaxInt64); its
	// MaxDecodeBytes 0, twice MaxBodyBytes.
	Config Config
	// Timeouts are the HTTP server's (Server.Serve).
	Timeouts Timeouts
	// Access is who may change the model (Start sets its ReadOnly from
	// ReadOnly).
	Access Access
	// Backbone is the backbone images go through (extract.ParseBackbone;
	// "": the one the model file names, else feature vectors only), and
	// Dim the feature dimension of a new model without one (0: a missing
	// file is not created).
	Backbone string `flag:"backbone"`
	Dim      int    `flag:"dim"`
	// Threads are ONNX Runtime's (0: one per CPU); Spin lets its idle
	// threads spin (extract.Extractor.Spin).
	Threads int `flag:"threads"`
	Spin    bool
	// Precision is the backbone arithmetic of a new model
	// (backbone.ParsePrecision); an int8 one is calibrated on Calib images
	// of the first learn, its ranges chosen by CalibMethod
	// (backbone.ParseCalibMethod). An existing model keeps its own.
	Precision   string `flag:"precision"`
	Calib       int    `flag:"calib"`
	CalibMethod string `flag:"calib-method"`
	// ModelConfig gives the configuration of a new model and checks an
	// existing model's against what was asked (configflag.Flags does
	// both); nil: the defaults (flycl.DefaultConfig), and no check.
	ModelConfig ModelConfig
	// Lock, LambdaPolicy and Checkpoints are the writer's (FileOptions).
	Lock         modelfile.LockOptions
	LambdaPolicy flycl.LambdaPolicy `flag:"lambda-policy"`
	Checkpoints  Checkpoints
	// InboxDir, when set, is the labelling inbox's folder, opened with
	// Inbox (inbox.Open); InboxPolicy says what it keeps.
	InboxDir    string `flag:"inbox"`
	Inbox       inbox.Options
	InboxPolicy inbox.Policy
	// ReadOnly serves predictions only (OpenOptions.ReadOnly), looking
	// for a new version of the file every ReloadEvery.
	ReadOnly    bool          `flag:"read-only"`
	ReloadEvery time.Duration `flag:"reload-every"`
	// Given are the fields the user set, by name ("Dim", "Lock.Wait"):
	// what was given and what was left at its default obey different
	// rules (a read-only server refuses the writer's options given; a
	// model file's pipeline fixes its precision unless Precision is
	// given; the backbone's and inbox's options given without a backbone
	// or an inbox are refused; an existing model's dimension is checked
	// against Dim given).
	Given []string
	// Resolver finds ONNX Runtime and the backbones' weights.
	Resolver locate.Resolver
	// Logger gets the server's log (nil: discarded).
	Logger *slog.Logger
}

// ModelConfig is the Fly-CL configuration asked for (*configflag.Flags
// is one).
type ModelConfig interface {
	// NewConfig is the configuration of a new model of d-dimensional
	// features (images: learning from images through a backbone).
	NewConfig(d int, images bool) (flycl.Config, error)
	// AgreeModel refuses what contradicts have, an existing model's
	// configuration.
	AgreeModel(have flycl.Config) error
}

// The rules an *OptionError says its option broke (errors.Is).
var (
	// ErrRange: the value is out of its range, or out of the range
	// another option sets (OptionError.Other).
	ErrRange = errors.New("server: option out of range")
	// ErrInvalid: the value does not parse (OptionError.Err says why).
	ErrInvalid = errors.New("server: option invalid")
	// ErrWriterOnly: an option of the model file's writer given to a
	// read-only server.
	ErrWriterOnly = errors.New("server: option of a writer given to a read-only server")
	// ErrNotApplicable: the option applies only with another
	// (OptionError.Other: ReadOnly, InboxDir, Backbone), not given.
	ErrNotApplicable = errors.New("server: option applies only with another")
	// ErrModelFixed: the option contradicts the model file's (a model's
	// configuration is fixed when it is created).
	ErrModelFixed = errors.New("server: option contradicts the model file")
	// ErrNoModel: the model file does not exist and nothing says how to
	// create it (no Backbone, no Dim).
	ErrNoModel = errors.New("server: no model file to serve")
)

// OptionError is an option of Options refused. Field is the option at
// fault; the message names options through Name (nil: by their field
// names), which a command sets to say its flags instead. It is the one
// field error type of the module (internal/fielderr): Value is the value
// refused (nil: not quoted); Rule the rule broken (ErrRange, ErrInvalid,
// ErrWriterOnly, ErrNotApplicable, ErrModelFixed, ErrNoModel), nil when
// Err, the error of what the option asked for (the backbone's weights,
// the inbox's folder, the extractor's resolution), says it; Problem what
// is out of range ("must be at least 1"); Other the option the rule
// relates Field to, with its value (the model's, for ErrModelFixed and
// intake.ErrCalibUnused).
type OptionError = fielderr.Error

// optionErr gives e its message, about the model file model for a rule
// about it ("": none).
func optionErr(e *OptionError, model string) *OptionError {
	e.Message = func(e *OptionError) string { return optionMessage(e, model) }
	return e
}

// optionMessage is e's message, naming options through e.NameOf.
func optionMessage(e *OptionError, model string) string {
	name := e.NameOf
	f, v, o, ov := name(e.Field), e.Value, name(e.Other), e.OtherValue
	switch {
	case e.Rule == ErrWriterOnly:
		return fmt.Sprintf("%s: a %s server takes no changes and creates no model", f, name("ReadOnly"))
	case e.Rule == ErrNotApplicable && e.Other == "ReadOnly":
		return fmt.Sprintf("%s applies to a %s server", f, o)
	case e.Rule == ErrNotApplicable && e.Other == "InboxDir":
		return fmt.Sprintf("%s applies to the labelling inbox: give %s DIR", f, o)
	case e.Rule == ErrNotApplicable:
		return fmt.Sprintf("%s, %s and %s apply to images through a backbone: give %s", name("Precision"), name("Calib"), name("CalibMethod"), o)
	case e.Rule == ErrModelFixed:
		return fmt.Sprintf("%s %v, but the model %s has d=%v: a model's configuration is fixed when it is created", f, v, model, ov)
	case e.Rule == ErrNoModel:
		return fmt.Sprintf("%v (give %s or %s to create a new model)", e.Err, name("Backbone"), name("Dim"))
	case e.Rule == ErrRange && e.Other == "Config.MaxBodyBytes":
		return fmt.Sprintf("%s %v: must be 0 (twice %s) or at least %s %v, or a request of the largest size could never be read", f, v, o, o, ov)
	case e.Rule == ErrRange && e.Other == "Config.MaxRequestPixels":
		return fmt.Sprintf("%s %v is more than %s %v", f, v, o, ov)
	case e.Rule == ErrRange && e.Other != "":
		if e.Field == "Inbox.MaxBytes" { // the pair in their order
			f, v, o, ov = o, ov, f, v
		}
		return fmt.Sprintf("%s %v, %s %v: %s", f, v, o, ov, e.Problem)
	case e.Rule == ErrRange:
		return fmt.Sprintf("%s %v: %s", f, v, e.Problem)
	case errors.Is(e.Err, intake.ErrPrecision):
		return fmt.Sprintf("%s %v: %s: %v", f, v, model, e.Err)
	case errors.Is(e.Err, ErrInt8Learned):
		return fmt.Sprintf("%s %v: the model %s learned from feature vectors without a backbone; int8 is for a new model", f, v, model)
	case errors.Is(e.Err, intake.ErrCalibUnused):
		return fmt.Sprintf("%s and %s calibrate the backbone of a new model served with %s int8; the model %s is served with %v features",
			name("Calib"), name("CalibMethod"), name("Precision"), model, ov)
	case e.Rule == nil && e.Field == "Backbone":
		return fmt.Sprintf("open the model's backbone (give %s to use another copy of the same weights): %v", f, e.Err)
	}
	return fmt.Sprintf("%s: %v", f, e.Err) // ErrInvalid, or what the option opened
}

// given reports whether the user set field (Given).
func (o Options) given(field string) bool { return slices.Contains(o.Given, field) }

// firstGiven returns the first of fields given ("": none).
func (o Options) firstGiven(fields ...string) string {
	for _, f := range fields {
		if o.given(f) {
			return f
		}
	}
	return ""
}

// Check refuses the values the server would otherwise replace by its
// defaults (a limit of 0) or could not honour: limits and counts below
// their least value, timeouts that are not positive, a MaxDecodeBytes
// that cannot hold a body of MaxBodyBytes, a DecodePixels neither
// positive nor -1, a MaxPixels beyond MaxRequestPixels, a Precision or
// CalibMethod that does not parse, and inbox limits inbox.Open or
// inbox.Policy would take as their defaults. The first refused is an
// *OptionError.
func (o Options) Check() error {
	c := o.Config
	for _, r := range []struct {
		field  string
		v, min int64
	}{
		{"Config.MaxBodyBytes", c.MaxBodyBytes, 1}, {"Config.MaxPixels", int64(c.MaxPixels), 1},
		{"Config.MaxRequestPixels", c.MaxRequestPixels, 1}, {"Config.MaxImages", int64(c.MaxImages), 1},
		{"Config.MaxLearnBytes", c.MaxLearnBytes, 1},
		{"Config.QueueLength", int64(c.QueueLength), 1}, {"Config.Extractions", int64(c.Extractions), 1},
		{"Dim", int64(o.Dim), 0}, {"Threads", int64(o.Threads), 0}, {"Calib", int64(o.Calib), 1},
	} {
		if r.v < r.min {
			return optionErr(&OptionError{Field: r.field, Value: r.v, Rule: ErrRange, Problem: fmt.Sprintf("must be at least %d", r.min)}, "")
		}
	}
	for _, r := range []struct {
		field string
		v     time.Duration
	}{
		{"Timeouts.Read", o.Timeouts.Read}, {"Timeouts.Write", o.Timeouts.Write},
		{"Timeouts.Idle", o.Timeouts.Idle}, {"Timeouts.Shutdown", o.Timeouts.Shutdown},
		{"Config.DecodeWait", c.DecodeWait},
	} {
		if r.v <= 0 {
			return optionErr(&OptionError{Field: r.field, Value: r.v, Rule: ErrRange, Problem: "must be positive"}, "")
		}
	}
	if d := c.MaxDecodeBytes; d < 0 || (d > 0 && d < c.MaxBodyBytes) {
		return optionErr(&OptionError{Field: "Config.MaxDecodeBytes", Value: d, Rule: ErrRange, Other: "Config.MaxBodyBytes", OtherValue: c.MaxBodyBytes}, "")
	}
	if c.DecodePixels == 0 || c.DecodePixels < -1 {
		return optionErr(&OptionError{Field: "Config.DecodePixels", Value: c.DecodePixels, Rule: ErrRange, Problem: "give a positive budget, or -1 for none"}, "")
	}
	if int64(c.MaxPixels) > c.MaxRequestPixels {
		return optionErr(&OptionError{Field: "Config.MaxPixels", Value: c.MaxPixels, Rule: ErrRange, Other: "Config.MaxRequestPixels", OtherValue: c.MaxRequestPixels}, "")
	}
	if _, err := backbone.ParsePrecision(o.Precision); err != nil {
		return optionErr(&OptionError{Field: "Precision", Value: o.Precision, Rule: ErrInvalid, Err: err}, "")
	}
	if err := o.checkInbox(); err != nil {
		return err
	}
	if _, err := backbone.ParseCalibMethod(o.CalibMethod); err != nil {
		return optionErr(&OptionError{Field: "CalibMethod", Value: o.CalibMethod, Rule: ErrInvalid, Err: err}, "")
	}
	return nil
}

// checkInbox refuses the inbox's limits and policy that inbox.Open and
// inbox.Policy would take as their defaults (inbox.CheckGiven).
func (o Options) checkInbox() error {
	lim := o.Inbox
	var be *inbox.BoundError
	if !errors.As(inbox.CheckGiven(lim, o.InboxPolicy), &be) {
		return nil
	}
	switch be.Field {
	case "MaxItems":
		return optionErr(&OptionError{Field: "Inbox.MaxItems", Value: lim.MaxItems, Rule: ErrRange, Problem: be.Problem, Other: "Inbox.MaxBytes", OtherValue: lim.MaxBytes}, "")
	case "MaxBytes":
		return optionErr(&OptionError{Field: "Inbox.MaxBytes", Value: lim.MaxBytes, Rule: ErrRange, Problem: be.Problem, Other: "Inbox.MaxItems", OtherValue: lim.MaxItems}, "")
	}
	return optionErr(&OptionError{Field: "InboxPolicy." + be.Field, Value: be.Value, Rule: ErrRange, Problem: be.Problem}, "")
}

// WriterOnly are the options of the model file's writer, that change or
// create the model: a read-only server refuses them given.
var WriterOnly = []string{"Dim", "Precision", "Calib", "CalibMethod", "Lock.Wait", "Checkpoints.Entries", "Checkpoints.Bytes",
	"LambdaPolicy", "InboxDir", "Inbox.MaxItems", "Inbox.MaxBytes", "InboxPolicy.Probability", "InboxPolicy.Margin", "Config.QueueLength"}

// CheckReadOnly applies the rules of a read-only server: it refuses the
// WriterOnly options given (ErrWriterOnly) and a ReloadEvery that is not
// positive (ErrRange); ReloadEvery given without ReadOnly is refused
// (ErrNotApplicable). Its errors are *OptionError, and input errors
// (flycl.IsInput).
func (o Options) CheckReadOnly() error {
	if o.ReadOnly {
		if f := o.firstGiven(WriterOnly...); f != "" {
			return flycl.Input(optionErr(&OptionError{Field: f, Rule: ErrWriterOnly}, ""))
		}
		if o.ReloadEvery <= 0 {
			return flycl.Input(optionErr(&OptionError{Field: "ReloadEvery", Value: o.ReloadEvery, Rule: ErrRange, Problem: "must be positive"}, ""))
		}
	}
	if !o.ReadOnly && o.given("ReloadEvery") {
		return flycl.Input(optionErr(&OptionError{Field: "ReloadEvery", Rule: ErrNotApplicable, Other: "ReadOnly"}, ""))
	}
	return nil
}
