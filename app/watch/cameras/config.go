package cameras

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/reject"
)

// ErrConfig is wrapped by every error of a configuration file that cannot
// be read or does not make sense.
var ErrConfig = errors.New("cameras: bad configuration")

// Limits of a configuration file: they bound what a file may make
// flycl do before anything is opened.
const (
	MaxFileSize = 1 << 20 // bytes
	MaxCameras  = 64
	MaxZones    = 64 // per camera
)

// File is a configuration file: the cameras and the MQTT broker they
// publish to.
type File struct {
	// MQTT is the broker the cameras publish to (nil: none).
	MQTT *MQTT
	// Cameras are the streams, in the file's order (at least one).
	Cameras []Camera
}

// MQTT is the broker part of a configuration file.
type MQTT struct {
	Broker       string `flag:"mqtt"` // mqtt://HOST[:PORT] or mqtts://HOST[:PORT]
	User         string `flag:"mqtt-user"`
	PasswordFile string `flag:"mqtt-password-file"` // its first line is the password
	CA           string `flag:"mqtt-ca"`            // PEM file of the CA that signed an mqtts:// broker's certificate
	Prefix       string `flag:"mqtt-prefix"`        // first level of the topics (default "flycl")
	// Discovery announces each camera to Home Assistant (default true)
	// under DiscoveryPrefix (default "homeassistant").
	Discovery       bool   `flag:"ha-discovery"`
	DiscoveryPrefix string `flag:"ha-prefix"`
	// Image publishes the frame (zone crop) that confirmed each answer
	// and announces it as a Home Assistant image entity (default false).
	Image bool `flag:"ha-image"`
	// ClientID names the connection ("": flycl-PREFIX_CAMERA): a
	// Single's only (a file's cameras each take the default).
	ClientID string `flag:"mqtt-client-id"`
}

// Camera is one stream of a configuration file with its model and its
// outputs.
type Camera struct {
	// Name names the camera in the output, the log, the metrics and the
	// MQTT topics: 1 to 64 of A-Z a-z 0-9 _ -.
	Name string
	// Source is what ffmpeg opens (a file, an rtsp:// or http:// URL, a
	// /dev/videoN device).
	Source string
	// RTSPTransport is ffmpeg's -rtsp_transport for an rtsp:// source:
	// "tcp" (the default: no frame lost to a lost packet) or "udp".
	RTSPTransport string
	// FPS samples the stream (0: every frame; default 1).
	FPS float64
	// Model is the model file; Backbone another location of its
	// backbone ("" : the model's own); Unknown its rejection (auto, off
	// or a number; default auto); Top the classes listed per frame
	// (default 3). Cameras with the same four share one loaded model.
	Model, Backbone, Unknown string
	Top                      int
	Debounce                 int // frames a new answer must hold (default 3)
	// ObjectKeep is the share of known objects a zone's state confirms
	// (object_keep:); when set, Unknown becomes ObjectKeepChoice's
	// per-frame share for Debounce (0: Unknown as given).
	ObjectKeep float64
	Zones      []watch.Zone
	// ZoneModels gives zones (by name) a model of their own instead of
	// Model (a zone written as a mapping with model:).
	ZoneModels map[string]ZoneModel
	// Webhook is a URL events are POSTed to ("": none), through a queue
	// of WebhookQueue events (default 256).
	Webhook      string
	WebhookQueue int
	// MQTT publishes the camera's answers to the file's broker (default
	// true when the file has one).
	MQTT       bool
	EveryFrame bool
	Stall      time.Duration // default 30 s
	Retries    int           // reconnections in a row without a frame before the camera stops (0: never)
	// Line is the camera's line in the file.
	Line int
}

// ZoneModel is a zone's own model: its file, its rejection and another
// location of its backbone ("": the camera's unknown, the model's own
// backbone).
type ZoneModel struct {
	Model, Unknown, Backbone string
}

// ModelKey says which cameras (and zones) share a loaded model.
type ModelKey struct {
	Model, Backbone, Unknown string
	Top                      int
}

// Key returns the camera's ModelKey.
func (c Camera) Key() ModelKey {
	return ModelKey{Model: c.Model, Backbone: c.Backbone, Unknown: c.Unknown, Top: c.Top}
}

// ZoneKey returns the ModelKey of a zone with its own model (false for
// a zone classified by the camera's model): the zone's file, backbone
// and rejection (the camera's when the zone gives none), the camera's
// top.
func (c Camera) ZoneKey(zone string) (ModelKey, bool) {
	zm, ok := c.ZoneModels[zone]
	if !ok {
		return ModelKey{}, false
	}
	return ModelKey{Model: zm.Model, Backbone: zm.Backbone, Unknown: cmp.Or(zm.Unknown, c.Unknown), Top: c.Top}, true
}

// Load reads and checks a configuration file (Parse). Relative paths in
// it (a camera's model, a source that is a file, the MQTT password_file
// and ca) are taken from the file's folder, so that the file means the
// same whatever the working directory of the process.
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(fh, MaxFileSize+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := Parse(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	rel := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	if f.MQTT != nil {
		rel(&f.MQTT.PasswordFile)
		rel(&f.MQTT.CA)
	}
	for i := range f.Cameras {
		c := &f.Cameras[i]
		rel(&c.Model)
		for name, zm := range c.ZoneModels {
			rel(&zm.Model)
			c.ZoneModels[name] = zm
		}
		if !strings.Contains(c.Source, "://") {
			rel(&c.Source)
		}
	}
	return f, nil
}

// Parse reads a configuration file (YAML): the errors wrap ErrConfig and
// name the line and the field.
//
//	mqtt:                      # optional
//	  broker: mqtt://192.168.1.10:1883
//	  user: flycl
//	  password_file: /etc/flycl/mqtt.pw
//	defaults:                  # optional: any camera field but name and source
//	  model: home.flycl
//	  fps: 1
//	cameras:
//	  - name: drive
//	    source: rtsp://user:pass@192.168.1.20:554/stream1
//	    zones:
//	      - gate=0,0,0.5,1.0
//	      - {name: car, rect: "0.5,0.3,0.5,0.7", model: car.flycl}
//	    webhook: http://alerts.local/hook
func Parse(b []byte) (*File, error) {
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrConfig, MaxFileSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: the file is empty: want a mapping with cameras:", ErrConfig)
	}
	root := doc.Content[0]
	if err := noAliases(root, 0); err != nil {
		return nil, err
	}
	f := &File{}
	var defaults, cams *yaml.Node
	err := fields(root, "the file", map[string]func(*yaml.Node) error{
		"mqtt":     func(n *yaml.Node) error { f.MQTT = &MQTT{Discovery: true}; return parseMQTT(n, f.MQTT) },
		"defaults": func(n *yaml.Node) error { defaults = n; return nil },
		"cameras":  func(n *yaml.Node) error { cams = n; return nil },
	})
	if err != nil {
		return nil, err
	}
	if cams == nil {
		return nil, fmt.Errorf("%w: line %d: no cameras: (a list of cameras, each with a name, a source and a model)", ErrConfig, root.Line)
	}
	if cams.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%w: line %d: cameras: want a list of cameras", ErrConfig, cams.Line)
	}
	if len(cams.Content) == 0 || len(cams.Content) > MaxCameras {
		return nil, fmt.Errorf("%w: line %d: cameras: %d cameras, want 1 to %d", ErrConfig, cams.Line, len(cams.Content), MaxCameras)
	}
	base := Camera{FPS: 1, Unknown: "auto", Top: 3, Debounce: 3, WebhookQueue: 256, MQTT: f.MQTT != nil, Stall: 30 * time.Second}
	if defaults != nil {
		if err := parseCamera(defaults, &base, "defaults", true); err != nil {
			return nil, err
		}
	}
	names := map[string]int{}
	for i, n := range cams.Content {
		c := base
		c.Zones = slices.Clone(base.Zones)
		c.ZoneModels = maps.Clone(base.ZoneModels)
		c.Line = n.Line
		if err := parseCamera(n, &c, fmt.Sprintf("camera %d", i+1), false); err != nil {
			return nil, err
		}
		if l, ok := names[c.Name]; ok {
			return nil, fmt.Errorf("%w: line %d: camera %q: the camera of line %d has this name", ErrConfig, n.Line, c.Name, l)
		}
		names[c.Name] = n.Line
		if c.MQTT && f.MQTT == nil {
			return nil, fmt.Errorf("%w: line %d: camera %q: mqtt: true needs a broker (mqtt: broker: … at the top of the file)", ErrConfig, n.Line, c.Name)
		}
		f.Cameras = append(f.Cameras, c)
	}
	return f, nil
}

// noAliases refuses YAML anchors' aliases (and bounds the nesting): the
// file's values are read where they are written ("defaults" shares them
// between cameras).
func noAliases(n *yaml.Node, depth int) error {
	if depth > 16 {
		return fmt.Errorf("%w: line %d: nested too deep", ErrConfig, n.Line)
	}
	if n.Kind == yaml.AliasNode {
		return fmt.Errorf("%w: line %d: YAML aliases (*%s) are not read; put shared values under defaults:", ErrConfig, n.Line, n.Value)
	}
	for _, c := range n.Content {
		if err := noAliases(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// fields calls each key's function on its value; an unknown or repeated
// key is an error naming its line.
func fields(n *yaml.Node, what string, fs map[string]func(*yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%w: line %d: %s: want a mapping of key: value", ErrConfig, n.Line, what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fs[k.Value]
		if k.Kind != yaml.ScalarNode || !ok {
			known := make([]string, 0, len(fs))
			for name := range fs {
				known = append(known, name)
			}
			slices.Sort(known)
			return fmt.Errorf("%w: line %d: %s: unknown key %q (known: %s)", ErrConfig, k.Line, what, k.Value, strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return fmt.Errorf("%w: line %d: %s: %s given twice", ErrConfig, k.Line, what, k.Value)
		}
		seen[k.Value] = true
		if err := f(v); err != nil {
			return err
		}
	}
	return nil
}

// scalar returns n's value, or an error when n is not a single value.
func scalar(n *yaml.Node, what, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%w: line %d: %s: %s: want a single value", ErrConfig, n.Line, what, key)
	}
	return n.Value, nil
}

func bad(n *yaml.Node, what, key, want string) error {
	return fmt.Errorf("%w: line %d: %s: %s: %s, got %q", ErrConfig, n.Line, what, key, want, n.Value)
}

func str(dst *string, what, key string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		v, err := scalar(n, what, key)
		if err != nil {
			return err
		}
		if n.Tag == "!!null" || strings.ContainsAny(v, "\x00\n\r") {
			return bad(n, what, key, "want a string on one line")
		}
		*dst = v
		return nil
	}
}

// oneOf refuses a mapping that has two of keys, naming the line of the
// second.
func oneOf(n *yaml.Node, what string, keys ...string) error {
	var seen *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; slices.Contains(keys, k.Value) {
			if seen != nil && seen.Value != k.Value {
				return fmt.Errorf("%w: line %d: %s: give one of %s, not both %s and %s (unknown is a raw score, keep a share of known photos, object_keep of known objects)", ErrConfig, k.Line, what, strings.Join(keys, ", "), seen.Value, k.Value)
			}
			seen = k
		}
	}
	return nil
}

// hasKey reports whether the mapping n has the key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// keepShare reads keep: a share of the known photos the rejection keeps
// (0.95, or 95%), the threshold taken from the model's calibration pool
// (watch.ParseRejection's keep:SHARE); it is stored in dst, the
// unknown choice (a mapping with both is refused: oneOf).
func keepShare(dst *string, what string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		v, err := scalar(n, what, "keep")
		if err != nil {
			return err
		}
		if _, _, err := reject.ParseKeep(reject.KeepPrefix + v); err != nil || n.Tag == "!!null" {
			return bad(n, what, "keep", "want the share of known photos kept, in (0, 1] (0.95) or a percentage (95%)")
		}
		*dst = reject.KeepPrefix + v
		return nil
	}
}

func boolean(dst *bool, what, key string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		v, err := scalar(n, what, key)
		if err != nil {
			return err
		}
		switch v {
		case "true", "yes", "on":
			*dst = true
		case "false", "no", "off":
			*dst = false
		default:
			return bad(n, what, key, "want true or false")
		}
		return nil
	}
}

func integer(dst *int, lo, hi int, what, key string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		v, err := scalar(n, what, key)
		if err != nil {
			return err
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < lo || i > hi {
			return bad(n, what, key, fmt.Sprintf("want a whole number from %d to %d", lo, hi))
		}
		*dst = i
		return nil
	}
}

func duration(dst *time.Duration, what, key string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		v, err := scalar(n, what, key)
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return bad(n, what, key, "want a positive duration such as 30s or 2m")
		}
		*dst = d
		return nil
	}
}

func parseMQTT(n *yaml.Node, m *MQTT) error {
	const w = "mqtt"
	err := fields(n, w, map[string]func(*yaml.Node) error{
		"broker":           str(&m.Broker, w, "broker"),
		"user":             str(&m.User, w, "user"),
		"password_file":    str(&m.PasswordFile, w, "password_file"),
		"ca":               str(&m.CA, w, "ca"),
		"prefix":           str(&m.Prefix, w, "prefix"),
		"discovery":        boolean(&m.Discovery, w, "discovery"),
		"discovery_prefix": str(&m.DiscoveryPrefix, w, "discovery_prefix"),
		"image":            boolean(&m.Image, w, "image"),
	})
	if err != nil {
		return err
	}
	if m.Broker == "" {
		return fmt.Errorf("%w: line %d: mqtt: no broker (mqtt://HOST[:PORT] or mqtts://HOST[:PORT])", ErrConfig, n.Line)
	}
	return nil
}

// parseCamera reads a camera (or, with defaults, the defaults: no name
// nor source) over c's values and checks it.
func parseCamera(n *yaml.Node, c *Camera, what string, defaults bool) error {
	var zoneNode *yaml.Node
	fs := map[string]func(*yaml.Node) error{
		"rtsp_transport": str(&c.RTSPTransport, what, "rtsp_transport"),
		"fps": func(n *yaml.Node) error {
			v, err := scalar(n, what, "fps")
			if err != nil {
				return err
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 1000 {
				return bad(n, what, "fps", "want frames per second from 0 (every frame) to 1000")
			}
			c.FPS = f
			return nil
		},
		"model":    str(&c.Model, what, "model"),
		"backbone": str(&c.Backbone, what, "backbone"),
		"unknown":  str(&c.Unknown, what, "unknown"),
		"keep":     keepShare(&c.Unknown, what),
		"object_keep": func(n *yaml.Node) error {
			v, err := scalar(n, what, "object_keep")
			if err != nil {
				return err
			}
			k, ok, err := reject.ParseKeep(reject.KeepPrefix + v)
			if err != nil || !ok || n.Tag == "!!null" {
				return bad(n, what, "object_keep", "want the share of known objects kept, in (0, 1] (0.95) or a percentage (95%)")
			}
			c.ObjectKeep = k
			return nil
		},
		"top":           integer(&c.Top, 1, 1000, what, "top"),
		"debounce":      integer(&c.Debounce, 1, 1000, what, "debounce"),
		"webhook":       str(&c.Webhook, what, "webhook"),
		"webhook_queue": integer(&c.WebhookQueue, 1, 1<<16, what, "webhook_queue"),
		"mqtt":          boolean(&c.MQTT, what, "mqtt"),
		"every_frame":   boolean(&c.EveryFrame, what, "every_frame"),
		"stall":         duration(&c.Stall, what, "stall"),
		"retries":       integer(&c.Retries, 0, 1<<20, what, "retries"),
		"zones":         func(n *yaml.Node) error { zoneNode = n; return nil },
	}
	if !defaults {
		fs["name"] = str(&c.Name, what, "name")
		fs["source"] = str(&c.Source, what, "source")
	}
	if err := fields(n, what, fs); err != nil {
		return err
	}
	if err := oneOf(n, what, "unknown", "keep", "object_keep"); err != nil {
		return err
	}
	if hasKey(n, "unknown") || hasKey(n, "keep") {
		c.ObjectKeep = 0 // this mapping's own choice overrides the defaults' object_keep
	}
	if !defaults && c.ObjectKeep > 0 {
		c.Unknown, _ = ObjectKeepChoice(c.ObjectKeep, c.Debounce) // a valid share: parsed above
	}
	if !defaults {
		if c.Name == "" {
			return fmt.Errorf("%w: line %d: %s: no name (1 to 64 of A-Z a-z 0-9 _ -)", ErrConfig, n.Line, what)
		}
		if !watch.ValidZoneName(c.Name) {
			return fmt.Errorf("%w: line %d: %s: name %q: want 1 to 64 of A-Z a-z 0-9 _ - (it is an MQTT topic level)", ErrConfig, n.Line, what, c.Name)
		}
		what = fmt.Sprintf("camera %q", c.Name)
		if c.Source == "" {
			return fmt.Errorf("%w: line %d: %s: no source (a video file, an rtsp:// or http:// URL, or /dev/videoN)", ErrConfig, n.Line, what)
		}
		if c.Model == "" {
			return fmt.Errorf("%w: line %d: %s: no model (give model: FILE here or under defaults:)", ErrConfig, n.Line, what)
		}
	}
	if zoneNode != nil {
		zs, zm, err := parseZones(zoneNode, what)
		if err != nil {
			return err
		}
		c.Zones, c.ZoneModels = zs, zm
	}
	switch c.RTSPTransport {
	case "", "tcp", "udp":
	default:
		return fmt.Errorf("%w: line %d: %s: rtsp_transport %q: want tcp or udp", ErrConfig, n.Line, what, c.RTSPTransport)
	}
	if c.Webhook != "" {
		u, err := url.Parse(c.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: line %d: %s: webhook %q: want an http:// or https:// URL", ErrConfig, n.Line, what, c.Webhook)
		}
	}
	return nil
}

// parseZones reads a camera's zones: each NAME=X,Y,W,H, or a mapping
// with name, rect (X,Y,W,H) and optionally its own model, unknown and
// backbone.
func parseZones(n *yaml.Node, what string) ([]watch.Zone, map[string]ZoneModel, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("%w: line %d: %s: zones: want a list of NAME=X,Y,W,H (or of {name: NAME, rect: \"X,Y,W,H\", model: FILE})", ErrConfig, n.Line, what)
	}
	if len(n.Content) > MaxZones {
		return nil, nil, fmt.Errorf("%w: line %d: %s: zones: %d zones, at most %d", ErrConfig, n.Line, what, len(n.Content), MaxZones)
	}
	zs := make([]watch.Zone, 0, len(n.Content))
	var models map[string]ZoneModel
	seen := map[string]bool{}
	for i, zn := range n.Content {
		var z watch.Zone
		var err error
		if zn.Kind == yaml.MappingNode {
			var zm ZoneModel
			if z, zm, err = parseZoneMapping(zn, fmt.Sprintf("%s: zone %d", what, i+1)); err != nil {
				return nil, nil, err
			}
			if zm.Model != "" {
				if models == nil {
					models = map[string]ZoneModel{}
				}
				models[z.Name] = zm
			}
		} else {
			v, err := scalar(zn, what, "zones")
			if err != nil {
				return nil, nil, err
			}
			if z, err = watch.ParseZone(v); err != nil {
				hint := ""
				if n.Style&yaml.FlowStyle != 0 && zn.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
					hint = " (in [ ] a comma separates items: write each zone on its own line, - NAME=X,Y,W,H, or quote it)"
				}
				return nil, nil, fmt.Errorf("%w: line %d: %s: zones: %w%s", ErrConfig, zn.Line, what, err, hint)
			}
		}
		if seen[z.Name] {
			return nil, nil, fmt.Errorf("%w: line %d: %s: zones: two zones are named %q", ErrConfig, zn.Line, what, z.Name)
		}
		seen[z.Name] = true
		zs = append(zs, z)
	}
	return zs, models, nil
}

// parseZoneMapping reads a zone written as a mapping: name and rect
// required, model, unknown (or keep) and backbone optional (unknown, keep
// and backbone only with a model).
func parseZoneMapping(n *yaml.Node, what string) (watch.Zone, ZoneModel, error) {
	var name, rect string
	var zm ZoneModel
	rectLine := n.Line
	err := fields(n, what, map[string]func(*yaml.Node) error{
		"name":     str(&name, what, "name"),
		"rect":     func(v *yaml.Node) error { rectLine = v.Line; return str(&rect, what, "rect")(v) },
		"model":    str(&zm.Model, what, "model"),
		"unknown":  str(&zm.Unknown, what, "unknown"),
		"keep":     keepShare(&zm.Unknown, what),
		"backbone": str(&zm.Backbone, what, "backbone"),
	})
	if err == nil {
		err = oneOf(n, what, "unknown", "keep")
	}
	if err != nil {
		return watch.Zone{}, ZoneModel{}, err
	}
	switch {
	case !watch.ValidZoneName(name):
		return watch.Zone{}, ZoneModel{}, fmt.Errorf("%w: line %d: %s: name %q: want 1 to 64 of A-Z a-z 0-9 _ -", ErrConfig, n.Line, what, name)
	case rect == "":
		return watch.Zone{}, ZoneModel{}, fmt.Errorf("%w: line %d: %s: no rect (X,Y,W,H in pixels, or in fractions of the frame with a decimal point)", ErrConfig, n.Line, what)
	case zm.Model == "" && (zm.Unknown != "" || zm.Backbone != ""):
		return watch.Zone{}, ZoneModel{}, fmt.Errorf("%w: line %d: %s: unknown, keep and backbone go with the zone's own model: give model: FILE too", ErrConfig, n.Line, what)
	}
	z, err := watch.ParseZone(name + "=" + rect)
	if err != nil {
		return watch.Zone{}, ZoneModel{}, fmt.Errorf("%w: line %d: %s: rect: %w", ErrConfig, rectLine, what, err)
	}
	return z, zm, nil
}
