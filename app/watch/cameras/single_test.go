package cameras

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/app/watch/mqtt"
	"github.com/flycl/flycl/internal/smallfile"
)

// validSingle is a Single that passes Check: flycl watch's defaults, a
// model and a source.
func validSingle() Single {
	return Single{Model: "m.flycl", Source: "x.mp4", Unknown: "auto", Top: 3, FFmpeg: "ffmpeg", MaxPixels: watch.DefaultMaxPixels, FPS: 1,
		Debounce: 3, WebhookQueue: 256, Flush: 10 * time.Second, Save: Save{Max: 1000, Every: 10},
		Collect: Collect{Every: 10 * time.Second, Max: 500}, MQTT: MQTT{Prefix: "flycl", Discovery: true, DiscoveryPrefix: "homeassistant"},
		Camera: "camera", Inbox: Inbox{MaxItems: 100, MaxBytes: 1 << 20, Below: 0.5, Margin: 0.1, Every: 10, Changes: true},
		Reload: 2 * time.Second, LogFormat: "text"}
}

// given says that the fields named were given.
func given(fields ...string) func(string) bool {
	return func(f string) bool {
		for _, g := range fields {
			if g == f {
				return true
			}
		}
		return false
	}
}

// TestSingleCheck: each rule of Single.Check, with a value that passes
// and one that fails; a failure is a *FieldError naming the field, whose
// message names fields by their Go names (and by a command's names
// through Name).
func TestSingleCheck(t *testing.T) {
	for _, c := range []struct {
		name   string
		set    func(*Single)
		field  string // "": passes
		msg    string // the message, fields named as Go names them
		cmdMsg string // the message with "--" before each name ("": not checked)
	}{
		{"defaults", func(*Single) {}, "", "", ""},
		{"metrics refused", func(s *Single) { s.Metrics = "127.0.0.1:9101" }, "Metrics", "Metrics needs Config FILE", "--Metrics needs --Config FILE"},
		{"collect every given with collect", func(s *Single) { s.Collect.Dir = "c"; s.Given = given("Collect.Every") }, "", "", ""},
		{"collect every given without collect", func(s *Single) { s.Given = given("Collect.Every") }, "Collect.Every",
			"Collect.Every needs Collect.Dir DIR", "--Collect.Every needs --Collect.Dir DIR"},
		{"collect max given without collect", func(s *Single) { s.Given = given("Collect.Max") }, "Collect.Max", "Collect.Max needs Collect.Dir DIR", ""},
		{"collect fields at their defaults, not given", func(s *Single) { s.Given = given("Top") }, "", "", ""},
		{"no model", func(s *Single) { s.Model = "" }, "Model", "give Model FILE", "give --Model FILE"},
		{"no source", func(s *Single) { s.Source = "" }, "Source", "give Source (a video file, a URL or /dev/videoN)", ""},
		{"fps 0", func(s *Single) { s.FPS = 0 }, "", "", ""},
		{"fps negative", func(s *Single) { s.FPS = -1 }, "FPS", "FPS must be 0 (every frame) or positive, got -1", "--FPS must be 0 (every frame) or positive, got -1"},
		{"fps NaN", func(s *Single) { s.FPS = math.NaN() }, "FPS", "FPS must be 0 (every frame) or positive, got NaN", ""},
		{"fps +Inf", func(s *Single) { s.FPS = math.Inf(1) }, "FPS", "FPS must be 0 (every frame) or positive, got +Inf", ""},
		{"top 1", func(s *Single) { s.Top = 1 }, "", "", ""},
		{"top 0", func(s *Single) { s.Top = 0 }, "Top", "Top must be positive, got 0", ""},
		{"webhook queue 1", func(s *Single) { s.WebhookQueue = 1 }, "", "", ""},
		{"webhook queue 0", func(s *Single) { s.WebhookQueue = 0 }, "WebhookQueue", "WebhookQueue must be positive, got 0", ""},
		{"max pixels 1", func(s *Single) { s.MaxPixels = 1 }, "", "", ""},
		{"max pixels 0", func(s *Single) { s.MaxPixels = 0 }, "MaxPixels", "MaxPixels must be positive, got 0", ""},
		{"collect every 1ns", func(s *Single) { s.Collect.Every = 1 }, "", "", ""},
		{"collect every 0", func(s *Single) { s.Collect.Every = 0 }, "Collect.Every", "Collect.Every must be positive, got 0s", ""},
		{"collect every negative", func(s *Single) { s.Collect.Every = -time.Second }, "Collect.Every", "Collect.Every must be positive, got -1s", ""},
		{"collect max 1", func(s *Single) { s.Collect.Max = 1 }, "", "", ""},
		{"collect max 0", func(s *Single) { s.Collect.Max = 0 }, "Collect.Max", "Collect.Max must be positive, got 0", ""},
		{"log format json", func(s *Single) { s.LogFormat = "json" }, "", "", ""},
		{"log format xml", func(s *Single) { s.LogFormat = "xml" }, "LogFormat", `LogFormat "xml": want text or json`, `--LogFormat "xml": want text or json`},
		{"inbox every given with an inbox", func(s *Single) { s.Inbox.Dir = "ib"; s.Given = given("Inbox.Every") }, "", "", ""},
		{"inbox every given without an inbox", func(s *Single) { s.Given = given("Inbox.Every") }, "Inbox.Every",
			"Inbox.Every applies to the labelling inbox: give Inbox.Dir DIR", "--Inbox.Every applies to the labelling inbox: give --Inbox.Dir DIR"},
		{"inbox changes given without an inbox", func(s *Single) { s.Given = given("Inbox.Changes") }, "Inbox.Changes",
			"Inbox.Changes applies to the labelling inbox: give Inbox.Dir DIR", ""},
		{"inbox max items given without an inbox, first", func(s *Single) { s.Given = given("Inbox.Margin", "Inbox.MaxItems") }, "Inbox.MaxItems",
			"Inbox.MaxItems applies to the labelling inbox: give Inbox.Dir DIR", ""},
		{"inbox max items 1", func(s *Single) { s.Inbox.MaxItems = 1 }, "", "", ""},
		{"inbox max items 0", func(s *Single) { s.Inbox.MaxItems = 0 }, "Inbox.MaxItems", "Inbox.MaxItems 0, Inbox.MaxBytes 1048576: must be at least 1",
			"--Inbox.MaxItems 0, --Inbox.MaxBytes 1048576: must be at least 1"},
		{"inbox max bytes 1", func(s *Single) { s.Inbox.MaxBytes = 1 }, "", "", ""},
		{"inbox max bytes 0", func(s *Single) { s.Inbox.MaxBytes = 0 }, "Inbox.MaxItems", "Inbox.MaxItems 100, Inbox.MaxBytes 0: must be at least 1", ""},
		{"inbox below 1", func(s *Single) { s.Inbox.Below = 1 }, "", "", ""},
		{"inbox below 0", func(s *Single) { s.Inbox.Below = 0 }, "Inbox.Below", "Inbox.Below 0: must be in (0, 1]", ""},
		{"inbox below 1.5", func(s *Single) { s.Inbox.Below = 1.5 }, "Inbox.Below", "Inbox.Below 1.5: must be in (0, 1]", "--Inbox.Below 1.5: must be in (0, 1]"},
		{"inbox below NaN", func(s *Single) { s.Inbox.Below = math.NaN() }, "Inbox.Below", "Inbox.Below NaN: must be in (0, 1]", ""},
		{"inbox margin 1e30", func(s *Single) { s.Inbox.Margin = 1e30 }, "", "", ""},
		{"inbox margin 0", func(s *Single) { s.Inbox.Margin = 0 }, "Inbox.Margin", "Inbox.Margin 0: must be positive", ""},
		{"inbox margin 1e31", func(s *Single) { s.Inbox.Margin = 1e31 }, "Inbox.Margin", "Inbox.Margin 1e+31: must be positive", ""},
		{"inbox margin NaN", func(s *Single) { s.Inbox.Margin = math.NaN() }, "Inbox.Margin", "Inbox.Margin NaN: must be positive", ""},
		{"inbox every 1", func(s *Single) { s.Inbox.Every = 1 }, "", "", ""},
		{"inbox every 0", func(s *Single) { s.Inbox.Every = 0 }, "Inbox.Every", "Inbox.Every 0: must be at least 1", "--Inbox.Every 0: must be at least 1"},
		{"reload 0", func(s *Single) { s.Reload = 0 }, "", "", ""},
		{"reload negative", func(s *Single) { s.Reload = -time.Second }, "Reload", "Reload -1s: must be 0 (never) or positive", "--Reload -1s: must be 0 (never) or positive"},
		{"a zone", func(s *Single) { s.Zones = []string{"door=0,0,0.5,1.0"} }, "", "", ""},
		{"a zone without its rectangle", func(s *Single) { s.Zones = []string{"door"} }, "Zones", "Zones: ", "--Zones: "},
		{"two zones of one name", func(s *Single) { s.Zones = []string{"a=0,0,1,1", "a=1,1,1,1"} }, "Zones", `Zones: watch: bad zone "a": two zones have this name`, ""},
		{"a zone's model", func(s *Single) { s.Zones = []string{"a=0,0,1,1"}; s.ZoneModels = []string{"a=a.flycl"} }, "", "", ""},
		{"a model of no zone", func(s *Single) { s.Zones = []string{"a=0,0,1,1"}; s.ZoneModels = []string{"b=b.flycl"} }, "ZoneModels",
			`ZoneModels "b=b.flycl": `, `--ZoneModels "b=b.flycl": `},
		{"MQTT image with a broker", func(s *Single) { s.MQTT.Broker = "mqtt://h"; s.MQTT.Image = true }, "", "", ""},
		{"MQTT image without a broker", func(s *Single) { s.MQTT.Image = true }, "MQTT.Image", "MQTT.Image needs MQTT.Broker", "--MQTT.Image needs --MQTT.Broker"},
		{"MQTT user with a broker", func(s *Single) { s.MQTT.Broker = "mqtt://h"; s.MQTT.User = "u" }, "", "", ""},
		{"MQTT user without a broker", func(s *Single) { s.MQTT.User = "u" }, "MQTT.User", "MQTT.User needs MQTT.Broker", ""},
		{"MQTT password file without a broker", func(s *Single) { s.MQTT.PasswordFile = "pw" }, "MQTT.PasswordFile", "MQTT.PasswordFile needs MQTT.Broker", ""},
		{"MQTT client id without a broker", func(s *Single) { s.MQTT.ClientID = "id" }, "MQTT.ClientID", "MQTT.ClientID needs MQTT.Broker", ""},
		{"MQTT CA without a broker", func(s *Single) { s.MQTT.CA = "ca.pem" }, "MQTT.CA", "MQTT.CA needs MQTT.Broker", ""},
		{"the first rule broken is reported", func(s *Single) { s.FPS = -1; s.Metrics = "x"; s.Given = given("Collect.Max") }, "Metrics", "Metrics needs Config FILE", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := validSingle()
			c.set(&s)
			err := s.Check()
			if c.field == "" {
				if err != nil {
					t.Fatalf("Check: %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("Check: %v (%T), want a *FieldError on %s", err, err, c.field)
			}
			if !strings.HasPrefix(err.Error(), c.msg) {
				t.Fatalf("message %q, want it to start with %q", err, c.msg)
			}
			if c.cmdMsg != "" {
				fe.Name = func(f string) string { return "--" + f }
				if !strings.HasPrefix(err.Error(), c.cmdMsg) {
					t.Fatalf("message with Name %q, want it to start with %q", err, c.cmdMsg)
				}
			}
		})
	}
}

// TestSingleRunBeforeModels: what Run refuses before any model loads,
// as a *FieldError naming the field (and wrapping the cause): the rules
// of Check, the MQTT password and CA files, the broker's options, the
// ffmpeg program; a model file that cannot be read is watch.OpenFile's
// error, naming the file.
func TestSingleRunBeforeModels(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pw, emptyPW, notPEM := write("pw", "secret\n"), write("empty", "\n"), write("ca.pem", "not a certificate")
	bigPW := write("big", "secret\n"+strings.Repeat("x", smallfile.SecretLimit-6)) // one byte over
	self, err := os.Executable()                                                   // a program that exists, as FFmpeg
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "none.flycl")
	for _, c := range []struct {
		name  string
		set   func(*Single)
		field string // "": not a *FieldError
		is    error  // wrapped (nil: not checked)
		msg   string // in the message
	}{
		{"a rule of Check", func(s *Single) { s.Top = 0 }, "Top", nil, "Top must be positive"},
		{"no password file", func(s *Single) { s.MQTT.Broker = "mqtt://h"; s.MQTT.PasswordFile = filepath.Join(dir, "nopw") }, "MQTT.PasswordFile",
			fs.ErrNotExist, "MQTT.PasswordFile: open "},
		{"an empty password", func(s *Single) { s.MQTT.Broker = "mqtt://h"; s.MQTT.PasswordFile = emptyPW }, "MQTT.PasswordFile",
			mqtt.ErrEmptyPassword, "MQTT.PasswordFile " + emptyPW + ": "},
		{"no CA file", func(s *Single) {
			s.MQTT.Broker = "mqtt://h"
			s.MQTT.PasswordFile = pw
			s.MQTT.CA = filepath.Join(dir, "noca")
		}, "MQTT.CA",
			fs.ErrNotExist, "MQTT.CA: open "},
		{"a CA file without a certificate", func(s *Single) { s.MQTT.Broker = "mqtts://h"; s.MQTT.CA = notPEM }, "MQTT.CA",
			mqtt.ErrNoCertificate, "MQTT.CA " + notPEM + ": "},
		{"an endless password file", func(s *Single) { s.MQTT.Broker = "mqtt://h"; s.MQTT.PasswordFile = "/dev/zero" }, "MQTT.PasswordFile",
			smallfile.ErrTooLarge, "MQTT.PasswordFile: /dev/zero: more than the limit of 65536 bytes"},
		{"an oversized password file", func(s *Single) { s.MQTT.Broker = "mqtt://h"; s.MQTT.PasswordFile = bigPW }, "MQTT.PasswordFile",
			smallfile.ErrTooLarge, "MQTT.PasswordFile: " + bigPW + ": 65537 bytes, more than the limit of 65536 bytes"},
		{"an endless CA file", func(s *Single) { s.MQTT.Broker = "mqtts://h"; s.MQTT.CA = "/dev/zero" }, "MQTT.CA",
			smallfile.ErrTooLarge, "MQTT.CA: /dev/zero: more than the limit of"},
		{"not an MQTT broker", func(s *Single) { s.MQTT.Broker = "http://h" }, "MQTT.Broker", mqtt.ErrConfig, "MQTT.Broker: "},
		{"a camera that is not one topic level", func(s *Single) { s.MQTT.Broker = "mqtt://h"; s.Camera = "a/b" }, "MQTT.Broker", mqtt.ErrConfig, `camera "a/b"`},
		{"no ffmpeg", func(s *Single) { s.FFmpeg = filepath.Join(dir, "no-ffmpeg") }, "FFmpeg", nil,
			"FFmpeg " + filepath.Join(dir, "no-ffmpeg") + ": "},
		{"no model file", func(s *Single) {
			s.FFmpeg = self
			s.Model = missing
			s.MQTT.Broker = "mqtt://h"
			s.MQTT.PasswordFile = pw
		}, "",
			fs.ErrNotExist, missing},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := validSingle()
			c.set(&s)
			_, err := s.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.msg) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("Run: %v, want an error with %q (wrapping %v)", err, c.msg, c.is)
			}
			var fe *FieldError
			if isField := errors.As(err, &fe); isField != (c.field != "") || (isField && fe.Field != c.field) {
				t.Fatalf("Run: %v (%T), want a *FieldError on %q", err, err, c.field)
			}
		})
	}
	if _, err := (&Single{}).Run(context.Background()); err == nil {
		t.Fatal("Run of an empty Single: no error")
	}
}

// TestSeveral: Several's rules (a value that passes and one that fails)
// and what Run refuses before the cameras run, each a *FieldError naming
// its field: the file, the ffmpeg program, Reload (checked after both),
// and New's error (a camera's model that cannot be read: named with its
// camera and line, wrapped under Config, and the models opened before it
// closed).
func TestSeveral(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "cameras.yaml")
	if err := os.WriteFile(conf, []byte("cameras:\n  - name: a\n    source: a.mp4\n    model: none.flycl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	valid := func() Several {
		return Several{Config: conf, FFmpeg: self, MaxPixels: 1, LogFormat: "json", Reload: time.Second}
	}
	for _, c := range []struct {
		name  string
		set   func(*Several)
		check string // Check's field ("": passes)
		run   string // Run's field
		msg   string // in Run's message
	}{
		{"valid", func(*Several) {}, "", "Config", `Config ` + conf + `: camera "a" (line 2): model ` + filepath.Join(dir, "none.flycl")},
		{"log format text", func(v *Several) { v.LogFormat = "text" }, "", "Config", "camera \"a\""},
		{"log format xml", func(v *Several) { v.LogFormat = "xml" }, "LogFormat", "LogFormat", `LogFormat "xml": want text or json`},
		{"max pixels 0", func(v *Several) { v.MaxPixels = 0 }, "MaxPixels", "MaxPixels", "MaxPixels must be positive, got 0"},
		{"no file", func(v *Several) { v.Config = filepath.Join(dir, "none.yaml") }, "", "Config", "Config: open "},
		{"not a file of cameras", func(v *Several) { v.Config = self }, "", "Config", "Config: "},
		{"no ffmpeg", func(v *Several) { v.FFmpeg = filepath.Join(dir, "no-ffmpeg") }, "", "FFmpeg", "FFmpeg " + filepath.Join(dir, "no-ffmpeg")},
		{"reload 0", func(v *Several) { v.Reload = 0 }, "", "Config", "camera \"a\""},
		{"reload negative", func(v *Several) { v.Reload = -time.Second }, "", "Reload", "Reload -1s: must be 0 (never) or positive"},
		{"reload negative, no file: the file first", func(v *Several) { v.Reload = -time.Second; v.Config = filepath.Join(dir, "none.yaml") }, "", "Config", "Config: open "},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := valid()
			c.set(&v)
			var fe *FieldError
			if err := v.Check(); (c.check == "") != (err == nil) || (err != nil && (!errors.As(err, &fe) || fe.Field != c.check)) {
				t.Fatalf("Check: %v, want a *FieldError on %q", err, c.check)
			}
			_, err := v.Run(context.Background())
			if !errors.As(err, &fe) || fe.Field != c.run || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Run: %v, want a *FieldError on %s with %q", err, c.run, c.msg)
			}
		})
	}
}

// TestNewFails: New that fails (the second camera's model cannot be
// opened) returns the error, without panicking, and closes the model
// it opened before; a file's MQTT password file that cannot be read is
// named as the file writes it.
func TestNewFails(t *testing.T) {
	closed := 0
	open := func(_ context.Context, k ModelKey) (*Model, error) {
		if k.Model == "bad.flycl" {
			return nil, errors.New("cannot open bad.flycl")
		}
		return &Model{Classifier: &colourClassifier{}, Name: k.Model, Close: func() error { closed++; return nil }}, nil
	}
	f, err := Parse([]byte("cameras:\n  - {name: a, source: a.mp4, model: good.flycl}\n  - {name: b, source: b.mp4, model: bad.flycl}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := New(context.Background(), f, Options{Open: open}); s != nil || err == nil || !strings.Contains(err.Error(), `camera "b" (line 3): model bad.flycl: cannot open bad.flycl`) {
		t.Fatalf("New: %v, %v; want no Set and the error of camera b", s, err)
	}
	if closed != 1 {
		t.Fatalf("the model opened before the failure closed %d times, want 1", closed)
	}
	f.MQTT = &MQTT{Broker: "mqtt://h", PasswordFile: filepath.Join(t.TempDir(), "pw")}
	_, err = New(context.Background(), f, Options{Open: open})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "MQTT.PasswordFile" || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "mqtt: password_file: open ") {
		t.Fatalf("New with a missing password file: %v, want a *FieldError on MQTT.PasswordFile named mqtt: password_file", err)
	}
}
