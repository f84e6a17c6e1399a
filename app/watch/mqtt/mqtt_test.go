package mqtt

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// The tests run Debian's mosquitto on 127.0.0.1 (a free port, a config
// file and its persistence in t.TempDir()); they skip without it.

type broker struct {
	t    *testing.T
	dir  string
	port int
	cmd  *exec.Cmd
}

func mosquitto(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"mosquitto", "/usr/sbin/mosquitto"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("mosquitto not installed (apt-get install mosquitto mosquitto-clients; .ci/run installs them): the MQTT tests need a real broker")
	return ""
}

func startBroker(t *testing.T) *broker {
	t.Helper()
	bin := mosquitto(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	b := &broker{t: t, dir: t.TempDir(), port: port}
	conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\nlog_dest stderr\n", port, b.dir) + asRoot()
	if err := os.WriteFile(filepath.Join(b.dir, "mosquitto.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	b.start(bin)
	t.Cleanup(b.kill)
	return b
}

// asRoot keeps a mosquitto started by root as root (it would switch to
// the user mosquitto, who cannot read the test's temporary folder).
func asRoot() string {
	if os.Geteuid() == 0 {
		return "user root\n"
	}
	return ""
}

func (b *broker) start(bin string) {
	b.t.Helper()
	b.cmd = exec.Command(bin, "-c", filepath.Join(b.dir, "mosquitto.conf"))
	b.cmd.Stderr = io.Discard
	if testing.Verbose() {
		b.cmd.Stderr = os.Stderr
	}
	if err := b.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	end := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(end) {
			b.t.Fatalf("mosquitto did not listen on %s in 5 s", b.addr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the broker at once (SIGKILL: no persistence written at exit).
func (b *broker) kill() {
	if b.cmd != nil && b.cmd.Process != nil {
		b.cmd.Process.Kill()
		b.cmd.Wait()
		b.cmd = nil
	}
}

func (b *broker) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }
func (b *broker) url() string  { return "mqtt://" + b.addr() }

type msg struct {
	topic, payload string
	retained       bool
}

// subscriber records every message under its topic filters.
type subscriber struct {
	c    paho.Client
	mu   sync.Mutex
	msgs []msg
}

func subscribe(t *testing.T, b *broker, filters ...string) *subscriber {
	t.Helper()
	s := &subscriber{}
	co := paho.NewClientOptions().AddBroker("tcp://" + b.addr()).SetClientID(fmt.Sprintf("test-sub-%d", time.Now().UnixNano())).
		SetAutoReconnect(false).SetConnectTimeout(5 * time.Second)
	s.c = paho.NewClient(co)
	if tok := s.c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("subscriber connect: %v", tok.Error())
	}
	for _, f := range filters {
		tok := s.c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) {
			s.mu.Lock()
			s.msgs = append(s.msgs, msg{m.Topic(), string(m.Payload()), m.Retained()})
			s.mu.Unlock()
		})
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", f, tok.Error())
		}
	}
	t.Cleanup(func() { s.c.Disconnect(0) })
	return s
}

// on returns the payloads seen on topic, in order.
func (s *subscriber) on(topic string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.msgs {
		if m.topic == topic {
			out = append(out, m.payload)
		}
	}
	return out
}

// last waits (at most 10 s) until topic's last payload satisfies ok.
func (s *subscriber) last(t *testing.T, topic string, ok func(string) bool) string {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for {
		if p := s.on(topic); len(p) > 0 && ok(p[len(p)-1]) {
			return p[len(p)-1]
		}
		if time.Now().After(end) {
			t.Fatalf("%s: payloads %q after 10 s", topic, s.on(topic))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func is(want string) func(string) bool { return func(s string) bool { return s == want } }

// frames is a file Source of 1×1 frames whose red value indexes names.
type frames struct{ seq []int }

func (f *frames) Open(context.Context) (watch.Stream, error) { return &frameStream{seq: f.seq}, nil }
func (f *frames) Live() bool                                 { return false }
func (f *frames) String() string                             { return "synthetic" }

type frameStream struct{ seq []int }

func (s *frameStream) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	if len(s.seq) == 0 {
		return nil, io.EOF
	}
	if dst == nil || len(dst.Pix) < 3 {
		dst = imageio.NewRGB(1, 1)
	}
	dst.W, dst.H, dst.Pix = 1, 1, dst.Pix[:3]
	dst.Pix[0] = uint8(s.seq[0])
	s.seq = s.seq[1:]
	return dst, nil
}
func (s *frameStream) Close() error { return nil }

var names = []string{"car", "empty", "unknown"}

// classes answers names[red]: "unknown" is a rejection, the others a
// class with a probability.
type classes struct{}

func (classes) Classify(_ context.Context, img *imageio.RGB) (watch.Prediction, error) {
	i := int(img.Pix[0])
	other := 1 - min(i, 1)
	p := watch.Prediction{Answer: names[i], Top: []flycl.Ranked{{Label: min(i, 1), Name: names[min(i, 1)], Score: 0.9}, {Label: other, Name: names[other], Score: 0.1}}}
	if names[i] == watch.UnknownAnswer {
		p.Unknown = true
		return p, nil
	}
	pr := 0.8 + 0.1*float64(i)
	p.Probability = &pr
	return p, nil
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestPublishAndBrokerRestart runs watch.Run over synthetic frames into a
// Publisher on a real mosquitto and checks the retained state,
// attributes, availability and Home Assistant discovery messages against
// the events Run wrote; then kills the broker (SIGKILL: its retained
// messages are not saved), gives an update while it is away, restarts it
// and checks that the publisher reconnects and the retained state is the
// latest answer, never another.
func TestPublishAndBrokerRestart(t *testing.T) {
	b := startBroker(t)
	sub := subscribe(t, b, "flycl/#", "homeassistant/#")
	p, err := New(Options{Broker: b.url(), Camera: "drive", Discovery: true, Model: "cam.flycl", ModelVersion: 7, SWVersion: "test",
		MaxBackoff: 2 * time.Second, Timeout: 5 * time.Second, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	p.Start(5 * time.Second)
	defer p.Close(time.Second)
	tp := p.Topics()
	if tp.State != "flycl/drive/state" || tp.Attributes != "flycl/drive/attributes" || tp.Availability != "flycl/drive/availability" ||
		tp.Discovery != "homeassistant/sensor/flycl_drive/answer/config" {
		t.Fatalf("topics %+v", tp)
	}
	sub.last(t, tp.Availability, is(Online))

	// car ×3, empty ×3, unknown ×3, car ×2 (debounce 2: four events)
	seq := []int{0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0}
	var out safeBuffer
	if _, err := watch.Run(context.Background(), watch.Config{Source: &frames{seq}, Classify: classes{}, Out: &out, Updates: p, Debounce: 2, Log: quiet()}); err != nil {
		t.Fatal(err)
	}
	var events []watch.Event
	preds := map[int]watch.Prediction{}
	dec := json.NewDecoder(&out.b)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var l struct {
			Type  string `json:"type"`
			Frame int    `json:"frame"`
		}
		var ev watch.Event
		var pred watch.Prediction
		for _, v := range []any{&l, &ev, &pred} {
			if err := json.Unmarshal(raw, v); err != nil {
				t.Fatal(err)
			}
		}
		if l.Type == "event" {
			events = append(events, ev)
		} else if l.Type == "frame" {
			preds[l.Frame] = pred
		}
	}
	wantClasses := []string{"car", "empty", "unknown", "car"}
	var classesSeen []string
	for _, e := range events {
		classesSeen = append(classesSeen, e.Class)
	}
	if !slices.Equal(classesSeen, wantClasses) {
		t.Fatalf("events %v, want %v", classesSeen, wantClasses)
	}
	if !p.Flush(10 * time.Second) {
		t.Fatal("the latest state was not published in 10 s")
	}
	final := events[len(events)-1]
	lastPred := preds[final.Frame]
	sub.last(t, tp.State, is("car"))
	// every state published is an event's answer, in the events' order
	// (the Publisher keeps the latest: a fast run may skip some)
	wantStates := []string{"car", "empty", NotRecognized, "car"} // the rejection's state is not Home Assistant's unknown
	if got := slices.Compact(sub.on(tp.State)); !isSubsequence(got, wantStates) {
		t.Fatalf("states %q not a subsequence of the events %q", got, wantClasses)
	}
	var a Attrs
	if err := json.Unmarshal([]byte(sub.last(t, tp.Attributes, func(string) bool { return true })), &a); err != nil {
		t.Fatal(err)
	}
	if a.Class != "car" || a.Previous != "unknown" || a.ModelVersion != 7 || a.EventID != final.ID || a.Frame != final.Frame ||
		a.Since != final.Since || !a.Time.Equal(final.Time) || a.Probability == nil || *a.Probability != *lastPred.Probability ||
		!slices.Equal(a.Top, lastPred.Top) || a.Unknown || a.Source != "synthetic" {
		t.Fatalf("attributes %+v, want the event %+v and the prediction %+v", a, final, lastPred)
	}
	var d Discovery
	if err := json.Unmarshal([]byte(sub.last(t, tp.Discovery, func(string) bool { return true })), &d); err != nil {
		t.Fatal(err)
	}
	wantD := Discovery{Name: "Answer", UniqueID: "flycl_drive_answer", StateTopic: tp.State, JSONAttributesTopic: tp.Attributes,
		AvailabilityTopic: tp.Availability, PayloadAvailable: "online", PayloadNotAvailable: "offline", QoS: 1, Icon: "mdi:cctv",
		Device: Device{Identifiers: []string{"flycl_drive"}, Name: "flycl drive", Model: "cam.flycl", Manufacturer: "flycl", SWVersion: "test"}}
	if d.Name != wantD.Name || d.UniqueID != wantD.UniqueID || d.StateTopic != wantD.StateTopic || d.JSONAttributesTopic != wantD.JSONAttributesTopic ||
		d.AvailabilityTopic != wantD.AvailabilityTopic || d.PayloadAvailable != wantD.PayloadAvailable || d.PayloadNotAvailable != wantD.PayloadNotAvailable ||
		d.Icon != wantD.Icon || !slices.Equal(d.Device.Identifiers, wantD.Device.Identifiers) || d.Device.Name != wantD.Device.Name ||
		d.Device.Model != wantD.Device.Model || d.Device.Manufacturer != wantD.Device.Manufacturer || d.Device.SWVersion != wantD.Device.SWVersion {
		t.Fatalf("discovery %+v, want %+v", d, wantD)
	}
	// every discovery message passes the validator written from Home Assistant's source
	ids := map[string]string{}
	sub.mu.Lock()
	seenMsgs := slices.Clone(sub.msgs)
	sub.mu.Unlock()
	for _, m := range seenMsgs {
		if strings.HasPrefix(m.topic, "homeassistant/") {
			if err := validateDiscovery("homeassistant", m.topic, []byte(m.payload), ids); err != nil {
				t.Fatal(err)
			}
		}
	}
	sub.c.Disconnect(0)

	// The broker dies; the answer changes while it is away.
	b.kill()
	p.Update(watch.Update{Event: watch.Event{ID: final.ID + 1, Class: "empty", Previous: "car", Time: time.Now()}})
	b.start(mosquitto(t))
	end := time.Now().Add(15 * time.Second)
	for p.Stats().Connects < 2 {
		if time.Now().After(end) {
			t.Fatalf("no reconnection in 15 s: %+v", p.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !p.Flush(10 * time.Second) {
		t.Fatal("the update given while the broker was away was not published in 10 s after its return")
	}
	after := subscribe(t, b, "flycl/#", "homeassistant/#")
	after.last(t, tp.State, is("empty"))
	after.last(t, tp.Availability, is(Online))
	after.last(t, tp.Discovery, func(s string) bool { return s != "" })
	time.Sleep(300 * time.Millisecond) // anything else on its way
	if got := after.on(tp.State); slices.ContainsFunc(got, func(s string) bool { return s != "empty" }) {
		t.Fatalf("after the restart the state topic carried %q, want only \"empty\"", got)
	}

	after.c.Disconnect(0)

	// The broker dies again, with no update meanwhile: what it retained
	// is lost (SIGKILL), and the publisher publishes it again.
	b.kill()
	b.start(mosquitto(t))
	end = time.Now().Add(15 * time.Second)
	for p.Stats().Connects < 3 {
		if time.Now().After(end) {
			t.Fatalf("no second reconnection in 15 s: %+v", p.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	again := subscribe(t, b, "flycl/#")
	again.last(t, tp.State, is("empty"))
	again.last(t, tp.Availability, is(Online))

	// A clean end says offline.
	p.Close(5 * time.Second)
	again.last(t, tp.Availability, is(Offline))
	if st := p.Stats(); st.Updates != 5 || st.Connects != 3 || st.Err() != nil {
		t.Fatalf("stats %+v", st)
	}
}

func isSubsequence(sub, seq []string) bool {
	i := 0
	for _, s := range seq {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

type safeBuffer struct {
	b  bytes.Buffer
	mu sync.Mutex
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestLastWill: a publisher that dies without disconnecting (its process
// killed) is declared offline by the broker, through its last will.
func TestLastWill(t *testing.T) {
	if u := os.Getenv("FLYCL_MQTT_WILL_BROKER"); u != "" {
		willChild(u)
		return
	}
	b := startBroker(t)
	sub := subscribe(t, b, "flycl/#")
	child := selfCommand("-test.run=^TestLastWill$")
	child.Env = append(os.Environ(), "FLYCL_MQTT_WILL_BROKER="+b.url())
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- nil
				return
			}
		}
		ready <- errors.New("the child ended before it was ready")
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the child was not ready in 15 s")
	}
	sub.last(t, "flycl/porch/state", is("cat"))
	sub.last(t, "flycl/porch/availability", is(Online))
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	start := time.Now()
	sub.last(t, "flycl/porch/availability", is(Offline))
	t.Logf("offline %s after the kill", time.Since(start).Round(time.Millisecond))
}

// selfCommand runs this test binary again. Under qemu-user (the release
// test runs the arm64 test binary so) FLYCL_TEST_EMULATOR names the
// emulator and its options: the kernel cannot run an arm64 binary itself.
func selfCommand(args ...string) *exec.Cmd {
	if e := strings.Fields(os.Getenv("FLYCL_TEST_EMULATOR")); len(e) > 0 {
		return exec.Command(e[0], append(append(e[1:], os.Args[0]), args...)...)
	}
	return exec.Command(os.Args[0], args...)
}

// willChild publishes one state, says "ready" and waits to be killed.
func willChild(broker string) {
	p, err := New(Options{Broker: broker, Camera: "porch", Log: quiet()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	p.Start(5 * time.Second)
	p.Update(watch.Update{Event: watch.Event{ID: 1, Class: "cat", Time: time.Now()}})
	if !p.Flush(10 * time.Second) {
		os.Exit(3)
	}
	fmt.Println("ready")
	time.Sleep(60 * time.Second)
	os.Exit(4)
}

// TestNewRefuses: options that cannot work are refused, naming the field.
func TestNewRefuses(t *testing.T) {
	for _, o := range []Options{
		{Broker: "http://host"},
		{Broker: "mqtt://"},
		{Broker: "mqtt://user:pw@host"},
		{Broker: "mqtt://host/path"},
		{Broker: "mqtt://host", Camera: "a/b"},
		{Broker: "mqtt://host", Camera: "a+"},
		{Broker: "mqtt://host", Prefix: "x/#"},
		{Broker: "mqtt://host", Prefix: "/x"},
		{Broker: "mqtt://host", DiscoveryPrefix: "ha//x"},
	} {
		if _, err := New(o); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", o, err)
		}
	}
	p, err := New(Options{Broker: "mqtts://broker.local", Prefix: "home/flycl", Camera: "front door", Discovery: true})
	if err != nil {
		t.Fatal(err)
	}
	if tp := p.Topics(); tp.State != "home/flycl/front door/state" || tp.Discovery != "homeassistant/sensor/home_flycl_front_door_"+nodeHash("front door")+"/answer/config" {
		t.Fatalf("topics %+v", tp)
	}
}

// TestTLSAndPassword: mqtts:// to a mosquitto with a certificate from a
// CA made here and a password file: the right password publishes, a wrong
// one publishes nothing and says why; a client that does not trust the CA
// does not connect.
func TestTLSAndPassword(t *testing.T) {
	bin := mosquitto(t)
	passwd, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		t.Skip("mosquitto_passwd not installed (apt-get install mosquitto)")
	}
	dir := t.TempDir()
	caPEM, certPEM, keyPEM := certificates(t)
	for name, b := range map[string][]byte{"ca.pem": caPEM, "cert.pem": certPEM, "key.pem": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(passwd, "-b", "-c", filepath.Join(dir, "pw"), "flycl", "s3cret").CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_passwd: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &broker{t: t, dir: dir, port: l.Addr().(*net.TCPAddr).Port}
	l.Close()
	conf := fmt.Sprintf("listener %d 127.0.0.1\ncafile %[2]s/ca.pem\ncertfile %[2]s/cert.pem\nkeyfile %[2]s/key.pem\nallow_anonymous false\npassword_file %[2]s/pw\n", b.port, dir) + asRoot()
	if err := os.WriteFile(filepath.Join(dir, "mosquitto.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	b.start(bin)
	t.Cleanup(b.kill)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	url := "mqtts://" + b.addr()

	for _, c := range []struct {
		name, password string
		tls            *tls.Config
		ok             bool
		why            string
	}{
		{"right password", "s3cret", &tls.Config{RootCAs: pool}, true, ""},
		{"wrong password", "guess", &tls.Config{RootCAs: pool}, false, "not Authorized"},
		{"untrusted certificate", "s3cret", nil, false, "certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(Options{Broker: url, Username: "flycl", Password: c.password, TLS: c.tls, Camera: "gate", ClientID: "flycl-" + c.name[:5],
				Timeout: 2 * time.Second, Log: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			p.Start(time.Second)
			p.Update(watch.Update{Event: watch.Event{ID: 1, Class: "closed", Time: time.Now()}})
			wait := 500 * time.Millisecond
			if c.ok {
				wait = 5 * time.Second
			}
			flushed := p.Flush(wait)
			p.Close(0)
			st := p.Stats()
			if c.ok {
				if !flushed || st.Err() != nil || st.Published < 1 { // a first connection may publish twice: on the update and on connecting
					t.Fatalf("flushed %v, stats %+v", flushed, st)
				}
				return
			}
			if flushed || !errors.Is(st.Err(), ErrUnpublished) || !strings.Contains(st.LastError, c.why) {
				t.Fatalf("flushed %v, stats %+v, want nothing published because of %q", flushed, st, c.why)
			}
		})
	}
}

// certificates makes a CA and a certificate for 127.0.0.1 signed by it.
func certificates(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flycl test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, _ := x509.ParseCertificate(caDER)
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}
