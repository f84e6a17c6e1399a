package server

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/inbox"
)

// validOptions are options Check passes: flycl serve's defaults.
func validOptions() Options {
	return Options{Config: DefaultConfig(), Timeouts: DefaultTimeouts(), Precision: "fp32", Calib: 64, CalibMethod: "minmax",
		Inbox:       inbox.Options{MaxItems: inbox.DefaultMaxItems, MaxBytes: inbox.DefaultMaxBytes},
		InboxPolicy: inbox.Policy{Probability: inbox.DefaultProbability, Margin: inbox.DefaultMargin}, ReloadEvery: time.Second}
}

// wantOptionError checks that err is an *OptionError of field breaking
// rule (field "": err is nil), and returns it.
func wantOptionError(t *testing.T, what string, err error, field string, rule error) *OptionError {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Errorf("%s: %v, want no error", what, err)
		}
		return nil
	}
	var oe *OptionError
	switch {
	case !errors.As(err, &oe):
		t.Errorf("%s: %v (%T), want an *OptionError of %s", what, err, err, field)
		return nil
	case oe.Field != field:
		t.Errorf("%s: %v: field %q, want %q", what, err, oe.Field, field)
	case rule != nil && !errors.Is(err, rule):
		t.Errorf("%s: %v: not the rule %v", what, err, rule)
	}
	return oe
}

// TestOptionsCheck: every rule of Check, a value it passes and one it
// refuses, naming the field and the rule.
func TestOptionsCheck(t *testing.T) {
	if err := validOptions().Check(); err != nil {
		t.Fatalf("flycl serve's defaults: %v", err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Options)
		field string // "": passes
		rule  error
	}{
		{"MaxBodyBytes 1", func(o *Options) { o.Config.MaxBodyBytes = 1 }, "", nil},
		{"MaxBodyBytes 0", func(o *Options) { o.Config.MaxBodyBytes = 0 }, "Config.MaxBodyBytes", ErrRange},
		{"MaxPixels 1", func(o *Options) { o.Config.MaxPixels = 1 }, "", nil},
		{"MaxPixels 0", func(o *Options) { o.Config.MaxPixels = 0 }, "Config.MaxPixels", ErrRange},
		{"MaxRequestPixels = MaxPixels", func(o *Options) { o.Config.MaxRequestPixels = int64(o.Config.MaxPixels) }, "", nil},
		{"MaxRequestPixels 0", func(o *Options) { o.Config.MaxRequestPixels = 0 }, "Config.MaxRequestPixels", ErrRange},
		{"MaxImages 1", func(o *Options) { o.Config.MaxImages = 1 }, "", nil},
		{"MaxImages 0", func(o *Options) { o.Config.MaxImages = 0 }, "Config.MaxImages", ErrRange},
		{"QueueLength 1", func(o *Options) { o.Config.QueueLength = 1 }, "", nil},
		{"QueueLength 0", func(o *Options) { o.Config.QueueLength = 0 }, "Config.QueueLength", ErrRange},
		{"Extractions 1", func(o *Options) { o.Config.Extractions = 1 }, "", nil},
		{"Extractions -1", func(o *Options) { o.Config.Extractions = -1 }, "Config.Extractions", ErrRange},
		{"Dim 0", func(o *Options) { o.Dim = 0 }, "", nil},
		{"Dim -6", func(o *Options) { o.Dim = -6 }, "Dim", ErrRange},
		{"Threads 0", func(o *Options) { o.Threads = 0 }, "", nil},
		{"Threads -2", func(o *Options) { o.Threads = -2 }, "Threads", ErrRange},
		{"Calib 1", func(o *Options) { o.Calib = 1 }, "", nil},
		{"Calib 0", func(o *Options) { o.Calib = 0 }, "Calib", ErrRange},
		{"Read 1ns", func(o *Options) { o.Timeouts.Read = 1 }, "", nil},
		{"Read 0", func(o *Options) { o.Timeouts.Read = 0 }, "Timeouts.Read", ErrRange},
		{"Write 1ns", func(o *Options) { o.Timeouts.Write = 1 }, "", nil},
		{"Write -1m", func(o *Options) { o.Timeouts.Write = -time.Minute }, "Timeouts.Write", ErrRange},
		{"Idle 1ns", func(o *Options) { o.Timeouts.Idle = 1 }, "", nil},
		{"Idle 0", func(o *Options) { o.Timeouts.Idle = 0 }, "Timeouts.Idle", ErrRange},
		{"Shutdown 1ns", func(o *Options) { o.Timeouts.Shutdown = 1 }, "", nil},
		{"Shutdown -1s", func(o *Options) { o.Timeouts.Shutdown = -time.Second }, "Timeouts.Shutdown", ErrRange},
		{"DecodeWait 1ns", func(o *Options) { o.Config.DecodeWait = 1 }, "", nil},
		{"DecodeWait 0", func(o *Options) { o.Config.DecodeWait = 0 }, "Config.DecodeWait", ErrRange},
		{"MaxDecodeBytes 0 (twice the body)", func(o *Options) { o.Config.MaxDecodeBytes = 0 }, "", nil},
		{"MaxDecodeBytes = MaxBodyBytes", func(o *Options) { o.Config.MaxDecodeBytes = o.Config.MaxBodyBytes }, "", nil},
		{"MaxDecodeBytes < MaxBodyBytes", func(o *Options) { o.Config.MaxDecodeBytes = o.Config.MaxBodyBytes - 1 }, "Config.MaxDecodeBytes", ErrRange},
		{"MaxDecodeBytes -1", func(o *Options) { o.Config.MaxDecodeBytes = -1 }, "Config.MaxDecodeBytes", ErrRange},
		{"DecodePixels -1 (no bound)", func(o *Options) { o.Config.DecodePixels = -1 }, "", nil},
		{"DecodePixels 1", func(o *Options) { o.Config.DecodePixels = 1 }, "", nil},
		{"DecodePixels 0", func(o *Options) { o.Config.DecodePixels = 0 }, "Config.DecodePixels", ErrRange},
		{"DecodePixels -2", func(o *Options) { o.Config.DecodePixels = -2 }, "Config.DecodePixels", ErrRange},
		{"MaxPixels > MaxRequestPixels", func(o *Options) { o.Config.MaxPixels = int(o.Config.MaxRequestPixels) + 1 }, "Config.MaxPixels", ErrRange},
		{"Precision int8", func(o *Options) { o.Precision = "int8" }, "", nil},
		{"Precision \"\" (fp32)", func(o *Options) { o.Precision = "" }, "", nil},
		{"Precision int4", func(o *Options) { o.Precision = "int4" }, "Precision", ErrInvalid},
		{"CalibMethod percentile:99.9", func(o *Options) { o.CalibMethod = "percentile:99.9" }, "", nil},
		{"CalibMethod median", func(o *Options) { o.CalibMethod = "median" }, "CalibMethod", ErrInvalid},
		{"Inbox.MaxItems 1", func(o *Options) { o.Inbox.MaxItems = 1 }, "", nil},
		{"Inbox.MaxItems 0", func(o *Options) { o.Inbox.MaxItems = 0 }, "Inbox.MaxItems", ErrRange},
		{"Inbox.MaxBytes 1", func(o *Options) { o.Inbox.MaxBytes = 1 }, "", nil},
		{"Inbox.MaxBytes -1", func(o *Options) { o.Inbox.MaxBytes = -1 }, "Inbox.MaxBytes", ErrRange},
		{"InboxPolicy.Probability 1", func(o *Options) { o.InboxPolicy.Probability = 1 }, "", nil},
		{"InboxPolicy.Probability 0", func(o *Options) { o.InboxPolicy.Probability = 0 }, "InboxPolicy.Probability", ErrRange},
		{"InboxPolicy.Probability 1.5", func(o *Options) { o.InboxPolicy.Probability = 1.5 }, "InboxPolicy.Probability", ErrRange},
		{"InboxPolicy.Probability NaN", func(o *Options) { o.InboxPolicy.Probability = math.NaN() }, "InboxPolicy.Probability", ErrRange},
		{"InboxPolicy.Margin 1e-9", func(o *Options) { o.InboxPolicy.Margin = 1e-9 }, "", nil},
		{"InboxPolicy.Margin -2", func(o *Options) { o.InboxPolicy.Margin = -2 }, "InboxPolicy.Margin", ErrRange},
		{"InboxPolicy.Margin +Inf", func(o *Options) { o.InboxPolicy.Margin = math.Inf(1) }, "InboxPolicy.Margin", ErrRange},
		{"InboxPolicy.Margin NaN", func(o *Options) { o.InboxPolicy.Margin = math.NaN() }, "InboxPolicy.Margin", ErrRange},
	} {
		o := validOptions()
		tc.edit(&o)
		err := o.Check()
		wantOptionError(t, tc.name, err, tc.field, tc.rule)
		if err != nil && flycl.IsInput(err) {
			t.Errorf("%s: %v is an input error; Check's are not (flycl serve's exit status 1)", tc.name, err)
		}
	}
}

// TestOptionErrorMessage: an OptionError names options through Name
// (here as flycl serve's flags), else by their fields, quoting values.
func TestOptionErrorMessage(t *testing.T) {
	flags := map[string]string{"Config.QueueLength": "--queue", "Config.MaxDecodeBytes": "--max-decode", "Config.MaxBodyBytes": "--max-body",
		"Config.MaxPixels": "--max-pixels", "Config.MaxRequestPixels": "--max-request-pixels", "Inbox.MaxItems": "--inbox-max-items",
		"Inbox.MaxBytes": "--inbox-max-bytes", "Precision": "--precision", "Calib": "--calib", "CalibMethod": "--calib-method",
		"Backbone": "--backbone", "Dim": "--dim", "ReadOnly": "--read-only", "ReloadEvery": "--reload-every", "InboxDir": "--inbox",
		"InboxPolicy.Margin": "--inbox-margin", "Timeouts.Write": "--write-timeout", "Lock.Wait": "--wait"}
	for _, tc := range []struct {
		err        *OptionError
		byField    string // the message without Name
		byFlag     string // with Name
		wantPrefix bool   // byFlag is the message's start (Err's text follows)
	}{
		{optionErr(&OptionError{Field: "Config.QueueLength", Value: int64(0), Rule: ErrRange, Problem: "must be at least 1"}, ""),
			"Config.QueueLength 0: must be at least 1", "--queue 0: must be at least 1", false},
		{optionErr(&OptionError{Field: "Timeouts.Write", Value: -time.Minute, Rule: ErrRange, Problem: "must be positive"}, ""),
			"Timeouts.Write -1m0s: must be positive", "--write-timeout -1m0s: must be positive", false},
		{optionErr(&OptionError{Field: "InboxPolicy.Margin", Value: -2.0, Rule: ErrRange, Problem: "must be positive"}, ""),
			"InboxPolicy.Margin -2: must be positive", "--inbox-margin -2: must be positive", false},
		{optionErr(&OptionError{Field: "Config.MaxDecodeBytes", Value: int64(999), Rule: ErrRange, Other: "Config.MaxBodyBytes", OtherValue: int64(1000)}, ""),
			"Config.MaxDecodeBytes 999: must be 0 (twice Config.MaxBodyBytes) or at least Config.MaxBodyBytes 1000, or a request of the largest size could never be read",
			"--max-decode 999: must be 0 (twice --max-body) or at least --max-body 1000, or a request of the largest size could never be read", false},
		{optionErr(&OptionError{Field: "Config.MaxPixels", Value: 2000, Rule: ErrRange, Other: "Config.MaxRequestPixels", OtherValue: int64(1000)}, ""),
			"Config.MaxPixels 2000 is more than Config.MaxRequestPixels 1000", "--max-pixels 2000 is more than --max-request-pixels 1000", false},
		{optionErr(&OptionError{Field: "Inbox.MaxBytes", Value: int64(-1), Rule: ErrRange, Problem: "must be at least 1", Other: "Inbox.MaxItems", OtherValue: 500}, ""),
			"Inbox.MaxItems 500, Inbox.MaxBytes -1: must be at least 1", "--inbox-max-items 500, --inbox-max-bytes -1: must be at least 1", false},
		{optionErr(&OptionError{Field: "Lock.Wait", Rule: ErrWriterOnly}, ""),
			"Lock.Wait: a ReadOnly server takes no changes and creates no model", "--wait: a --read-only server takes no changes and creates no model", false},
		{optionErr(&OptionError{Field: "ReloadEvery", Rule: ErrNotApplicable, Other: "ReadOnly"}, ""),
			"ReloadEvery applies to a ReadOnly server", "--reload-every applies to a --read-only server", false},
		{optionErr(&OptionError{Field: "Inbox.MaxItems", Rule: ErrNotApplicable, Other: "InboxDir"}, ""),
			"Inbox.MaxItems applies to the labelling inbox: give InboxDir DIR", "--inbox-max-items applies to the labelling inbox: give --inbox DIR", false},
		{optionErr(&OptionError{Field: "Calib", Rule: ErrNotApplicable, Other: "Backbone"}, ""),
			"Precision, Calib and CalibMethod apply to images through a backbone: give Backbone",
			"--precision, --calib and --calib-method apply to images through a backbone: give --backbone", false},
		{optionErr(&OptionError{Field: "Dim", Value: 7, Rule: ErrModelFixed, OtherValue: 6}, "m.flycl"),
			"Dim 7, but the model m.flycl has d=6: a model's configuration is fixed when it is created",
			"--dim 7, but the model m.flycl has d=6: a model's configuration is fixed when it is created", false},
		{optionErr(&OptionError{Field: "Model", Value: "m.flycl", Rule: ErrNoModel, Err: errors.New("open m.flycl: file does not exist")}, ""),
			"open m.flycl: file does not exist (give Backbone or Dim to create a new model)",
			"open m.flycl: file does not exist (give --backbone or --dim to create a new model)", false},
		{optionErr(&OptionError{Field: "ReadOnly", Err: errors.New("stat m.flycl: no such file")}, ""),
			"ReadOnly: stat m.flycl: no such file", "--read-only: stat m.flycl: no such file", false},
		{optionErr(&OptionError{Field: "Backbone", Err: errors.New("no weights")}, ""),
			"open the model's backbone (give Backbone to use another copy of the same weights): no weights",
			"open the model's backbone (give --backbone to use another copy of the same weights): no weights", false},
		{optionErr(&OptionError{Field: "Precision", Value: "int8", Err: ErrInt8Learned}, "m.flycl"),
			"Precision int8: the model m.flycl learned from feature vectors without a backbone; int8 is for a new model",
			"--precision int8: the model m.flycl learned from feature vectors without a backbone; int8 is for a new model", false},
	} {
		if got := tc.err.Error(); got != tc.byField {
			t.Errorf("without Name:\n got %s\nwant %s", got, tc.byField)
		}
		e := *tc.err
		e.Name = func(f string) string { return flags[f] }
		if got := e.Error(); got != tc.byFlag {
			t.Errorf("with flag names:\n got %s\nwant %s", got, tc.byFlag)
		}
		if tc.err.Rule != nil && !errors.Is(tc.err, tc.err.Rule) || tc.err.Err != nil && !errors.Is(tc.err, tc.err.Err) {
			t.Errorf("%v: does not unwrap to its rule and error", tc.err)
		}
	}
}

// TestOptionsCheckReadOnly: a read-only server refuses every writer's
// option given, and a reload period that is not positive; a reload
// period given to a writer is refused. The refusals are input errors.
func TestOptionsCheckReadOnly(t *testing.T) {
	type tcase struct {
		name     string
		readOnly bool
		given    []string
		reload   time.Duration
		field    string // "": passes
		rule     error
	}
	cases := []tcase{
		{"read-only, nothing given", true, nil, time.Second, "", nil},
		{"read-only, reader's options given", true, []string{"Backbone", "Threads", "Config.MaxBodyBytes", "Config.Unknown", "ReloadEvery"}, 10 * time.Millisecond, "", nil},
		{"read-only, reload 0", true, []string{"ReloadEvery"}, 0, "ReloadEvery", ErrRange},
		{"read-only, reload -1s", true, nil, -time.Second, "ReloadEvery", ErrRange},
		{"writer, reload given", false, []string{"ReloadEvery"}, time.Second, "ReloadEvery", ErrNotApplicable},
		{"writer, reload 0 not given", false, nil, 0, "", nil},
		{"writer, writer's options given", false, WriterOnly, time.Second, "", nil},
		{"read-only, the first writer's option given", true, []string{"Config.QueueLength", "Calib"}, time.Second, "Calib", ErrWriterOnly},
	}
	for _, f := range WriterOnly {
		cases = append(cases, tcase{"read-only, " + f, true, []string{f}, time.Second, f, ErrWriterOnly})
	}
	for _, tc := range cases {
		o := validOptions()
		o.ReadOnly, o.Given, o.ReloadEvery = tc.readOnly, tc.given, tc.reload
		err := o.CheckReadOnly()
		wantOptionError(t, tc.name, err, tc.field, tc.rule)
		if err != nil && !flycl.IsInput(err) {
			t.Errorf("%s: %v is not an input error", tc.name, err)
		}
	}
}

// fakeModelConfig is a ModelConfig: new models take cfg; an existing
// model is refused when refuse is set.
type fakeModelConfig struct {
	cfg    flycl.Config
	refuse error
	asked  []int // the dimensions NewConfig was asked for
}

func (f *fakeModelConfig) NewConfig(d int, images bool) (flycl.Config, error) {
	f.asked = append(f.asked, d)
	return f.cfg, nil
}
func (f *fakeModelConfig) AgreeModel(flycl.Config) error { return f.refuse }

// TestStartRules: the rules Start applies between the options and the
// model file, before it listens, each refused with an *OptionError
// naming the field (or the ModelConfig's error, naming the file), and a
// value that passes.
func TestStartRules(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.flycl")
	{ // d = testDim, testConfig, a learn saved
		be := newFileBackend(t, saved)
		x, y := clusters(rand.New(rand.NewPCG(1, 2)), []int{0, 1}, 4)
		learnAll(t, be, x, y)
		be.Close()
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("--m 300, but the model has 200")
	for _, tc := range []struct {
		name  string
		edit  func(*Options)
		field string // "": starts; "-": fails with another error
		rule  error
		err   error // an error it wraps too
	}{
		{"check first", func(o *Options) { o.Config.QueueLength = 0 }, "Config.QueueLength", ErrRange, nil},
		{"a new model with Dim", func(o *Options) {
			o.Model, o.Dim, o.ModelConfig = filepath.Join(dir, "new.flycl"), testDim, &fakeModelConfig{cfg: testConfig()}
		}, "", nil, nil},
		{"a missing model without Dim", func(o *Options) { o.Model = filepath.Join(dir, "absent.flycl") }, "Model", ErrNoModel, fs.ErrNotExist},
		{"an existing model, its Dim given", func(o *Options) { o.Dim, o.Given = testDim, []string{"Dim"} }, "", nil, nil},
		{"an existing model, another Dim given", func(o *Options) { o.Dim, o.Given = testDim+1, []string{"Dim"} }, "Dim", ErrModelFixed, nil},
		{"an existing model, another Dim not given", func(o *Options) { o.Dim = testDim + 1 }, "", nil, nil},
		{"an existing model, its configuration refused", func(o *Options) { o.ModelConfig = &fakeModelConfig{refuse: refused} }, "-", nil, refused},
		{"Precision given without a backbone", func(o *Options) { o.Given = []string{"Precision"} }, "Precision", ErrNotApplicable, nil},
		{"CalibMethod given without a backbone", func(o *Options) { o.Given = []string{"CalibMethod"} }, "CalibMethod", ErrNotApplicable, nil},
		{"an inbox option without InboxDir", func(o *Options) { o.Given = []string{"InboxPolicy.Margin"} }, "InboxPolicy.Margin", ErrNotApplicable, nil},
		{"an inbox option with InboxDir", func(o *Options) {
			o.InboxDir, o.Given = filepath.Join(dir, "inbox"), []string{"InboxDir", "Inbox.MaxItems"}
		}, "", nil, nil},
		{"an InboxDir that cannot be opened", func(o *Options) { o.InboxDir = filepath.Join(notDir, "inbox") }, "InboxDir", nil, nil},
		{"read-only", func(o *Options) { o.ReadOnly = true }, "", nil, nil},
		{"read-only, a writer's option given", func(o *Options) { o.ReadOnly, o.Given = true, []string{"Checkpoints.Entries"} }, "Checkpoints.Entries", ErrWriterOnly, nil},
		{"read-only, a missing model", func(o *Options) { o.ReadOnly, o.Model = true, filepath.Join(dir, "absent.flycl") }, "ReadOnly", nil, fs.ErrNotExist},
		{"writer, ReloadEvery given", func(o *Options) { o.Given = []string{"ReloadEvery"} }, "ReloadEvery", ErrNotApplicable, nil},
		{"an address that does not parse", func(o *Options) { o.Addr = "nowhere" }, "-", nil, nil},
	} {
		o := validOptions()
		o.Model, o.Addr = saved, "127.0.0.1:0"
		tc.edit(&o)
		r, err := Start(context.Background(), o)
		switch tc.field {
		case "":
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if err := r.Close(); err != nil {
				t.Errorf("%s: Close: %v", tc.name, err)
			}
			continue
		case "-":
			if err == nil {
				t.Errorf("%s: started", tc.name)
				r.Close()
			}
		default:
			wantOptionError(t, tc.name, err, tc.field, tc.rule)
			if err == nil {
				r.Close()
			}
		}
		if tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: %v does not wrap %v", tc.name, err, tc.err)
		}
		if err != nil && r != nil {
			t.Errorf("%s: an error and a server", tc.name)
		}
	}
	// every refusal closed what it opened: the model file's lock is free
	be, err := Open(context.Background(), saved, OpenOptions{})
	if err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
	be.Close()
}

// TestStartServe: Start creates a new model with ModelConfig's
// configuration for Dim, listens, and Serve serves it (a learn reaches
// the file) until the context is cancelled, then closes the model file
// (its lock is free) and the inbox.
func TestStartServe(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	mc := &fakeModelConfig{cfg: testConfig()}
	o := validOptions()
	o.Model, o.Addr, o.Dim, o.ModelConfig, o.InboxDir = model, "127.0.0.1:0", testDim, mc, filepath.Join(dir, "inbox")
	o.Config.DecodePixels = -1
	r, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(mc.asked) != 1 || mc.asked[0] != testDim {
		t.Errorf("NewConfig asked for d %v, want [%d]", mc.asked, testDim)
	}
	if r.Auth || r.Backbone != "" || r.Server.View().Dim() != testDim {
		t.Errorf("started: auth %v, backbone %q, d %d", r.Auth, r.Backbone, r.Server.View().Dim())
	}
	if r.Server.cfg.DecodePixels != math.MaxInt64 {
		t.Errorf("DecodePixels -1: the server's budget is %d", r.Server.cfg.DecodePixels)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	x, y := clusters(rand.New(rand.NewPCG(4, 5)), []int{0, 1}, 4)
	learnFeatures(t, "http://"+r.Listener.Addr().String(), "", x, y)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	m := savedModel(t, model)
	if n := m.Model.Classes().Len(); n != 2 || m.Model.Config().M != testConfig().M {
		t.Errorf("the file holds %d classes, m=%d; want 2 classes, m=%d", n, m.Model.Config().M, testConfig().M)
	}
	be, err := Open(context.Background(), model, OpenOptions{})
	if err != nil {
		t.Fatalf("after Serve: %v", err)
	}
	be.Close()
	if _, err := os.Stat(filepath.Join(dir, "inbox")); err != nil {
		t.Errorf("the inbox folder: %v", err)
	}
	if !strings.HasPrefix(r.Listener.Addr().String(), "127.0.0.1:") {
		t.Errorf("listened on %s", r.Listener.Addr())
	}
}

// learnAll teaches be x with labels y (class names).
func learnAll(t *testing.T, be Backend, x [][]float32, y []int) {
	t.Helper()
	var flat []float32
	names := make([]string, len(y))
	for i := range x {
		flat = append(flat, x[i]...)
		names[i] = className(y[i])
	}
	if _, _, err := be.Learn(context.Background(), flat, names, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
}
