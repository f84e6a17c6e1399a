package mqtt

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/internal/mqttlimit"
)

// maxIncoming bounds the packets the publisher accepts from the broker
// (it subscribes to nothing: acknowledgements are a few bytes): a PUBLISH
// over it is dropped as it arrives, any other packet over it ends the
// connection (mqttlimit).
const maxIncoming = 64 << 10

// ErrConfig is wrapped by the errors of options that cannot work.
var ErrConfig = errors.New("mqtt: bad configuration")

// ErrUnpublished is the error of a Publisher that was given updates and
// had none acknowledged by the broker (Stats.Err).
var ErrUnpublished = errors.New("mqtt: no state was published")

// Payloads of the availability topic.
const (
	Online  = "online"
	Offline = "offline"
)

// Options configure a Publisher; zero values take the defaults.
type Options struct {
	// Broker is mqtt://HOST[:PORT] (default port 1883) or
	// mqtts://HOST[:PORT] (TLS, default port 8883).
	Broker   string
	Username string
	Password string
	// ClientID names the connection (default "flycl-PREFIX-CAMERA"); two
	// clients with one ID push each other off the broker.
	ClientID string
	// TLS configures mqtts:// (nil: the system's roots, the broker's host
	// name checked).
	TLS *tls.Config
	// Prefix is the first level of the topics (default "flycl").
	Prefix string
	// Camera names the stream: the second level of the topics (default
	// "camera"). It may not contain '/', '+' or '#'.
	Camera string
	// Discovery publishes Home Assistant's discovery message under
	// DiscoveryPrefix (default "homeassistant").
	Discovery       bool
	DiscoveryPrefix string
	// Zones names the zones of a watch with zones: each has its own
	// state and attributes topics, PREFIX/CAMERA/ZONE/state and
	// …/attributes, and its own Home Assistant sensor; the camera's
	// availability topic is theirs too. An update of a zone not listed
	// gets topics all the same but no sensor. Empty: one answer, the
	// camera's.
	Zones []string
	// ZoneModels names the own model of the zones that have one (by
	// zone): the attributes' model for that zone.
	ZoneModels map[string]string
	// Model names the model (device model in Home Assistant, and the
	// attributes' model), ModelVersion its version (in the attributes,
	// when the prediction does not tell its own), SWVersion flycl's
	// version.
	Model        string
	ModelVersion uint64
	SWVersion    string
	// Image publishes, beside each answer, the frame (the zone's crop)
	// that confirmed it as a JPEG on PREFIX/CAMERA[/ZONE]/image, retained,
	// and announces it to Home Assistant as an image entity (with
	// Discovery): one picture per change of the answer, and again after
	// a reconnection. ImageMaxSide bounds its longest side (default 640
	// pixels: a larger picture is scaled down).
	Image        bool
	ImageMaxSide int
	// Classes, when given, are the model's classes (a zone with its own
	// model: the union): each answer is also published, not retained, on
	// PREFIX/CAMERA[/ZONE]/event as a Home Assistant event entity whose
	// event types are the classes' states and NotRecognized
	// (components/mqtt/event.py: event_types required, the payload a
	// JSON object with event_type, a retained message ignored). An
	// automation "a stranger at the gate" is then one trigger in Home
	// Assistant's UI.
	Classes []string
	// KeepAlive is the MQTT keep-alive (default 30 s): a publisher that
	// vanishes without closing its connection is declared offline (its
	// last will) after 1.5 of it.
	KeepAlive time.Duration
	// MaxBackoff is the longest wait between reconnection attempts
	// (default 30 s; the first is 1 s, doubled after each).
	MaxBackoff time.Duration
	// Timeout bounds one publication's acknowledgement (default 10 s).
	Timeout time.Duration
	Log     *slog.Logger // default slog.Default()
}

// Topics are a Publisher's topics.
type Topics struct {
	State, Attributes, Availability string
	// Discovery is the Home Assistant discovery topic ("" without discovery).
	Discovery string
	// Image is the topic of the confirming frame's JPEG, ImageDiscovery
	// its image entity's discovery topic ("" without Options.Image, or
	// without discovery).
	Image, ImageDiscovery string
	// Event and EventDiscovery: with Options.Classes.
	Event, EventDiscovery string
}

// Stats count a Publisher's work.
type Stats struct {
	Updates   int64  `json:"updates"`   // updates given
	Published int64  `json:"published"` // states acknowledged by the broker (republications included)
	Connects  int64  `json:"connects"`  // connections made (the first included)
	LastError string `json:"last_error,omitempty"`
}

// Err returns an error wrapping ErrUnpublished when updates were given
// and the broker acknowledged none of them.
func (s Stats) Err() error {
	if s.Updates == 0 || s.Published > 0 {
		return nil
	}
	return fmt.Errorf("%w: %d updates, %d connections (last error: %s)", ErrUnpublished, s.Updates, s.Connects, cmp.Or(s.LastError, "none"))
}

// Publisher publishes a camera's debounced answers to an MQTT broker
// (a watch.UpdateSink). Make one with New, then Start it; Close it at the
// end.
type Publisher struct {
	o      Options
	topics Topics
	node   string
	log    *slog.Logger
	client paho.Client

	mu     sync.Mutex
	states map[string]*zoneState // by zone ("" without zones)
	order  []string              // the zones in the order of their first update
	gen    uint64                // connections made
	stats  Stats
	wake   chan struct{}
	stop   chan struct{}
	exited chan struct{}
	closed bool
	// removing: a Publisher used by Remove announces nothing.
	removing bool
}

// zoneState is the latest update of one zone and what of it is
// published.
type zoneState struct {
	latest *watch.Update
	seq    uint64 // updates given
	doneAt struct{ seq, gen uint64 }
}

func (z *zoneState) pending(gen uint64) bool {
	return z.latest != nil && (z.doneAt.seq != z.seq || z.doneAt.gen != gen)
}

// New checks o and returns a Publisher; nothing is connected yet.
func New(o Options) (*Publisher, error) {
	o.Prefix = cmp.Or(o.Prefix, "flycl")
	o.Camera = cmp.Or(o.Camera, "camera")
	o.DiscoveryPrefix = cmp.Or(o.DiscoveryPrefix, "homeassistant")
	o.KeepAlive = cmp.Or(o.KeepAlive, 30*time.Second)
	o.MaxBackoff = cmp.Or(o.MaxBackoff, 30*time.Second)
	o.Timeout = cmp.Or(o.Timeout, 10*time.Second)
	o.ImageMaxSide = cmp.Or(o.ImageMaxSide, 640)
	if o.ImageMaxSide < 1 {
		return nil, fmt.Errorf("%w: image max side %d: want a positive number of pixels", ErrConfig, o.ImageMaxSide)
	}
	for name, v := range map[string]string{"prefix": o.Prefix, "camera": o.Camera, "discovery prefix": o.DiscoveryPrefix} {
		if err := topicLevels(v); err != nil {
			return nil, fmt.Errorf("%w: %s %q: %v", ErrConfig, name, v, err)
		}
	}
	if strings.Contains(o.Camera, "/") {
		return nil, fmt.Errorf("%w: camera %q: one topic level, without '/'", ErrConfig, o.Camera)
	}
	for _, z := range o.Zones {
		if !watch.ValidZoneName(z) {
			return nil, fmt.Errorf("%w: zone %q: 1 to 64 of A-Z a-z 0-9 _ -", ErrConfig, z)
		}
	}
	u, err := url.Parse(o.Broker)
	if err != nil {
		return nil, fmt.Errorf("%w: broker %q: %v", ErrConfig, o.Broker, err)
	}
	port := u.Port()
	switch u.Scheme {
	case "mqtt", "tcp":
		port = cmp.Or(port, "1883")
		u.Scheme = "tcp"
	case "mqtts", "ssl", "tls":
		port = cmp.Or(port, "8883")
		u.Scheme = "ssl"
	default:
		return nil, fmt.Errorf("%w: broker %q: want mqtt://HOST[:PORT] or mqtts://HOST[:PORT]", ErrConfig, o.Broker)
	}
	if u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%w: broker %q: want mqtt://HOST[:PORT] or mqtts://HOST[:PORT]", ErrConfig, o.Broker)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: broker %q: give the user and password as options, not in the URL", ErrConfig, o.Broker)
	}
	broker := u.Scheme + "://" + u.Hostname() + ":" + port
	if strings.Contains(u.Hostname(), ":") {
		broker = u.Scheme + "://[" + u.Hostname() + "]:" + port
	}
	p := &Publisher{o: o, log: cmp.Or(o.Log, slog.Default()), node: sanitize(o.Prefix) + "_" + nodeID(o.Camera),
		states: map[string]*zoneState{}, wake: make(chan struct{}, 1), stop: make(chan struct{}), exited: make(chan struct{})}
	base := o.Prefix + "/" + o.Camera + "/"
	p.topics = Topics{State: base + "state", Attributes: base + "attributes", Availability: base + "availability"}
	if o.Discovery {
		p.topics.Discovery = o.DiscoveryPrefix + "/sensor/" + p.node + "/answer/config"
	}
	if o.Image {
		p.topics.Image = base + "image"
		if o.Discovery {
			p.topics.ImageDiscovery = o.DiscoveryPrefix + "/image/" + p.node + "/crop/config"
		}
	}
	if len(o.Classes) > 0 {
		p.topics.Event = base + "event"
		if o.Discovery {
			p.topics.EventDiscovery = o.DiscoveryPrefix + "/event/" + p.node + "/answer/config"
		}
	}
	co := paho.NewClientOptions().AddBroker(broker).
		SetClientID(cmp.Or(o.ClientID, "flycl-"+p.node)).
		SetUsername(o.Username).SetPassword(o.Password).
		SetCleanSession(true).
		SetKeepAlive(o.KeepAlive).
		SetWill(p.topics.Availability, Offline, 1, true).
		SetAutoReconnect(true).SetMaxReconnectInterval(o.MaxBackoff).
		SetConnectRetry(true).SetConnectRetryInterval(min(5*time.Second, o.MaxBackoff)).
		SetConnectTimeout(o.Timeout).SetWriteTimeout(o.Timeout).
		SetCustomOpenConnectionFn(mqttlimit.Open(maxIncoming, nil)).
		SetOnConnectHandler(p.onConnect).
		SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
			if f, ok := n.(paho.ConnectionNotificationFailed); ok && f.Reason != nil {
				p.setErr(f.Reason)
				p.log.Warn("mqtt: connection refused or failed; retrying", "broker", o.Broker, "err", f.Reason)
			}
		}).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			p.setErr(err)
			p.log.Warn("mqtt: connection lost; reconnecting", "broker", o.Broker, "err", err)
		})
	if u.Scheme == "ssl" {
		tc := o.TLS
		if tc == nil {
			tc = &tls.Config{}
		}
		tc = tc.Clone()
		tc.ServerName = cmp.Or(tc.ServerName, u.Hostname())
		co.SetTLSConfig(tc)
	}
	p.client = paho.NewClient(co)
	return p, nil
}

// topicLevels checks a topic prefix: not empty, no wildcard, no empty level.
func topicLevels(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case strings.ContainsAny(s, "+#\x00"):
		return errors.New("contains a wildcard '+' or '#' or a NUL")
	case strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//"):
		return errors.New("has an empty topic level")
	}
	return nil
}

// Topics returns the Publisher's topics (the camera's, without zones).
func (p *Publisher) Topics() Topics { return p.topics }

// rejected says whether u's answer is the model's rejection (watch's
// "unknown"), not a class of that name.
func rejected(u watch.Update) bool {
	return u.Class == watch.UnknownAnswer &&
		(u.Prediction.Unknown || len(u.Prediction.Top) == 0 || u.Prediction.Top[0].Name != watch.UnknownAnswer)
}

// ZoneTopics returns a zone's topics: PREFIX/CAMERA/ZONE/state and
// …/attributes, the camera's availability, and the zone's sensor's
// discovery topic. The zone "" has the camera's topics.
func (p *Publisher) ZoneTopics(zone string) Topics {
	if zone == "" {
		return p.topics
	}
	base := p.o.Prefix + "/" + p.o.Camera + "/" + zone + "/"
	t := Topics{State: base + "state", Attributes: base + "attributes", Availability: p.topics.Availability}
	if p.o.Discovery {
		t.Discovery = p.o.DiscoveryPrefix + "/sensor/" + p.node + "/" + nodeID(zone) + "_answer/config"
	}
	if p.o.Image {
		t.Image = base + "image"
		if p.o.Discovery {
			t.ImageDiscovery = p.o.DiscoveryPrefix + "/image/" + p.node + "/" + nodeID(zone) + "_crop/config"
		}
	}
	if len(p.o.Classes) > 0 {
		t.Event = base + "event"
		if p.o.Discovery {
			t.EventDiscovery = p.o.DiscoveryPrefix + "/event/" + p.node + "/" + nodeID(zone) + "_answer/config"
		}
	}
	return t
}

// Start connects to the broker, waiting at most wait for the first
// connection (it is retried in the background after that, and the
// updates wait for it), and starts publishing.
func (p *Publisher) Start(wait time.Duration) {
	tok := p.client.Connect()
	if !tok.WaitTimeout(wait) {
		p.log.Warn("mqtt: broker not reached yet; still trying", "broker", p.o.Broker, "waited", wait)
	} else if err := tok.Error(); err != nil {
		p.setErr(err)
		p.log.Warn("mqtt: connect", "broker", p.o.Broker, "err", err)
	}
	go p.run()
}

// Update implements watch.UpdateSink: u becomes the state to publish.
// It never blocks.
func (p *Publisher) Update(u watch.Update) {
	u.Prediction.Top = append([]flycl.Ranked(nil), u.Prediction.Top...)
	p.mu.Lock()
	z := p.states[u.Zone]
	if z == nil {
		z = &zoneState{}
		p.states[u.Zone] = z
		p.order = append(p.order, u.Zone)
	}
	z.latest = &u
	z.seq++
	p.stats.Updates++
	p.mu.Unlock()
	p.poke()
}

func (p *Publisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stats returns the counts so far.
func (p *Publisher) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

func (p *Publisher) setErr(err error) {
	p.mu.Lock()
	p.stats.LastError = err.Error()
	p.mu.Unlock()
}

// onConnect runs after every connection: availability, discovery, and
// the latest state again.
func (p *Publisher) onConnect(c paho.Client) {
	p.mu.Lock()
	if p.removing {
		p.mu.Unlock()
		return
	}
	p.gen++
	p.stats.Connects++
	n := p.stats.Connects
	p.mu.Unlock()
	p.log.Info("mqtt: connected", "broker", p.o.Broker, "connection", n, "state_topic", p.topics.State)
	if p.topics.Discovery != "" {
		if len(p.o.Zones) == 0 {
			if err := p.publish(p.topics.Discovery, p.discovery()); err != nil {
				p.log.Warn("mqtt: discovery", "err", err)
			}
		}
		for _, z := range p.o.Zones {
			b, _ := json.Marshal(p.ZoneDiscoveryMessage(z))
			if err := p.publish(p.ZoneTopics(z).Discovery, b); err != nil {
				p.log.Warn("mqtt: discovery", "zone", z, "err", err)
			}
		}
		zones := p.o.Zones
		if len(zones) == 0 {
			zones = []string{""}
		}
		for _, z := range zones {
			if tp := p.ZoneTopics(z); tp.ImageDiscovery != "" {
				b, _ := json.Marshal(p.ImageDiscoveryMessage(z))
				if err := p.publish(tp.ImageDiscovery, b); err != nil {
					p.log.Warn("mqtt: image discovery", "zone", z, "err", err)
				}
			}
			if tp := p.ZoneTopics(z); tp.EventDiscovery != "" {
				b, _ := json.Marshal(p.EventDiscoveryMessage(z))
				if err := p.publish(tp.EventDiscovery, b); err != nil {
					p.log.Warn("mqtt: event discovery", "zone", z, "err", err)
				}
			}
		}
	}
	p.clearStale(c)
	if err := p.publish(p.topics.Availability, []byte(Online)); err != nil {
		p.log.Warn("mqtt: availability", "err", err)
	}
	p.poke()
}

// publish sends one retained QoS 1 message and waits for its
// acknowledgement (at most Options.Timeout).
func (p *Publisher) publish(topic string, payload []byte) error {
	tok := p.client.Publish(topic, 1, true, payload)
	if !tok.WaitTimeout(p.o.Timeout) {
		err := fmt.Errorf("mqtt: %s: no acknowledgement in %s", topic, p.o.Timeout)
		p.setErr(err)
		return err
	}
	if err := tok.Error(); err != nil {
		err = fmt.Errorf("mqtt: %s: %w", topic, err)
		p.setErr(err)
		return err
	}
	return nil
}

// run publishes the latest update of each zone whenever there is one not
// yet published on the current connection.
func (p *Publisher) run() {
	defer close(p.exited)
	for {
		select {
		case <-p.stop:
			return
		case <-p.wake:
		}
		p.mu.Lock()
		var z *zoneState
		for _, name := range p.order {
			if st := p.states[name]; st.pending(p.gen) {
				z = st
				break
			}
		}
		if z == nil || !p.client.IsConnectionOpen() {
			p.mu.Unlock()
			continue
		}
		u, seq, gen := *z.latest, z.seq, p.gen
		fresh := z.doneAt.seq != seq // a new answer, not its republication
		p.mu.Unlock()
		tp := p.ZoneTopics(u.Zone)
		a := Attributes(u, p.o.ModelVersion)
		a.Model = cmp.Or(p.o.ZoneModels[u.Zone], p.o.Model)
		attrs, _ := json.Marshal(a)
		err := p.publish(tp.Attributes, attrs)
		if err == nil && tp.Image != "" && u.Image != nil {
			// the picture before the state: an automation the state
			// triggers finds the picture that goes with it
			var b bytes.Buffer
			if err = jpeg.Encode(&b, inbox.Thumbnail(u.Image, p.o.ImageMaxSide), &jpeg.Options{Quality: 85}); err == nil {
				err = p.publish(tp.Image, b.Bytes())
			}
		}
		if err == nil {
			err = p.publish(tp.State, []byte(State(u.Class, rejected(u))))
		}
		if err == nil && tp.Event != "" && fresh {
			// once per answer, not again after a reconnection; not
			// retained (Home Assistant ignores a retained event)
			ev, _ := json.Marshal(eventPayload(a))
			if t := p.client.Publish(tp.Event, 1, false, ev); !t.WaitTimeout(p.o.Timeout) || t.Error() != nil {
				p.log.Warn("mqtt: event not published", "topic", tp.Event, "err", t.Error())
			}
		}
		p.mu.Lock()
		if err == nil {
			z.doneAt.seq, z.doneAt.gen = seq, gen
			p.stats.Published++
		}
		again := false
		for _, st := range p.states {
			again = again || st.pending(p.gen)
		}
		p.mu.Unlock()
		if err != nil {
			p.log.Warn("mqtt: state not published; will retry", "class", u.Class, "zone", u.Zone, "err", err)
			time.AfterFunc(time.Second, p.poke)
		} else if again {
			p.poke()
		}
	}
}

// Flush waits until the latest update of every zone is published on the
// current connection, at most wait; it reports whether it was.
func (p *Publisher) Flush(wait time.Duration) bool {
	end := time.Now().Add(wait)
	for {
		p.mu.Lock()
		ok := true
		for _, st := range p.states {
			ok = ok && !st.pending(p.gen)
		}
		p.mu.Unlock()
		if ok {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Finish closes the publisher as Close does (waiting up to wait), logs
// its counters and returns Stats.Err: the error of a broker that took no
// state.
func (p *Publisher) Finish(wait time.Duration) error {
	p.Close(wait)
	st := p.Stats()
	p.log.Info("mqtt", "updates", st.Updates, "published", st.Published, "connections", st.Connects, "last_error", st.LastError)
	return st.Err()
}

// Close waits at most wait for the latest state to be published, then
// publishes "offline" on the availability topic and disconnects.
func (p *Publisher) Close(wait time.Duration) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	if !p.Flush(wait) {
		p.log.Warn("mqtt: the latest state was not published before the end", "topic", p.topics.State)
	}
	close(p.stop)
	<-p.exited
	if p.client.IsConnectionOpen() {
		if err := p.publish(p.topics.Availability, []byte(Offline)); err != nil {
			p.log.Warn("mqtt: availability offline", "err", err)
		}
	}
	p.client.Disconnect(250)
}
