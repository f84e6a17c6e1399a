package frigate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// startMosquitto runs Debian's mosquitto on a free port of 127.0.0.1,
// with users (name → password) when given (then anonymous clients are
// refused); it skips without mosquitto.
func startMosquitto(t *testing.T, users map[string]string) string {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/mosquitto"); err != nil {
			t.Skip("mosquitto not installed (apt-get install mosquitto): the MQTT tests need a real broker")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf("listener %d 127.0.0.1\n", l.Addr().(*net.TCPAddr).Port)
	if os.Geteuid() == 0 {
		conf += "user root\n"
	}
	if len(users) == 0 {
		conf += "allow_anonymous true\n"
	} else {
		pw := filepath.Join(dir, "passwd")
		os.WriteFile(pw, nil, 0o600)
		for u, p := range users {
			if out, err := exec.Command("mosquitto_passwd", "-b", pw, u, p).CombinedOutput(); err != nil {
				t.Skipf("mosquitto_passwd: %v %s", err, out)
			}
		}
		conf += "allow_anonymous false\npassword_file " + pw + "\n"
	}
	os.WriteFile(filepath.Join(dir, "mosquitto.conf"), []byte(conf), 0o644)
	cmd := exec.Command(bin, "-c", filepath.Join(dir, "mosquitto.conf"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "mqtt://" + addr
		}
		if time.Now().After(end) {
			t.Fatalf("mosquitto did not listen on %s in 5 s", addr)
		}
	}
}

// recorder answers from the crop's centre colour (red: "robin", blue:
// "jay", else unknown) and keeps every crop it was given.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]*imageio.RGB // by answer
}

func (r *recorder) Classify(_ context.Context, img *imageio.RGB) (watch.Prediction, error) {
	i := 3 * (img.H/2*img.W + img.W/2)
	px := img.Pix[i : i+3]
	p := watch.Prediction{Answer: watch.UnknownAnswer, Unknown: true}
	switch {
	case px[0] > 180 && px[2] < 80:
		p = watch.Prediction{Answer: "robin"}
	case px[2] > 180 && px[0] < 80:
		p = watch.Prediction{Answer: "jay"}
	}
	if !p.Unknown {
		pr := 0.9
		p.Probability = &pr
	}
	r.mu.Lock()
	r.seen[p.Answer] = append(r.seen[p.Answer], img)
	r.mu.Unlock()
	return p, nil
}

// meanAbs is the mean absolute difference of img and want's RGB over
// the pixels in mask.
func meanAbs(img *imageio.RGB, want *image.RGBA, mask func(x, y int) bool) float64 {
	var s float64
	n := 0
	for y := range img.H {
		for x := range img.W {
			if !mask(x, y) {
				continue
			}
			p, q := img.Pix[3*(y*img.W+x):], want.Pix[y*want.Stride+4*x:]
			for c := range 3 {
				s += math.Abs(float64(p[c]) - float64(q[c]))
			}
			n++
		}
	}
	return s / float64(3*max(n, 1))
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// TestDefaultInstall runs a Labeller against the fake Frigate of a
// default install (snapshots off, so has_snapshot is false in every
// message; auth on: the authenticated port) and a real mosquitto with a
// login, fed events messages shaped as tracked_object.py writes them:
//
//   - a tracked bird gets its sub-label, once, after 3 snapshots agree;
//   - every crop classified is clean: it equals Frigate's crop of the
//     clean frame (no box, label or timestamp drawn) up to JPEG's error,
//     while the crop Frigate serves by default (bbox drawn) does not;
//   - a sub-label face recognition set is not overwritten;
//   - an object that ended (snapshot not saved) is not fetched again.
func TestDefaultInstall(t *testing.T) {
	broker := startMosquitto(t, map[string]string{"frigate": "mqtt-secret", "flycl": "flycl-mqtt"})
	ff := &fakeFrigate2{user: "admin", pw: "frigate-pass", objs: map[string]*frigateObject{}}
	srv := httptest.NewServer(ff)
	defer srv.Close()
	red, blue := color.RGBA{220, 30, 30, 255}, color.RGBA{30, 30, 220, 255}
	boxA, boxB := [4]int{200, 150, 320, 260}, [4]int{400, 100, 520, 230}
	ff.objs["1700000000.0-robin"] = &frigateObject{camera: "garden", label: "bird", frame: scene(640, 480, boxA, red), frameTime: 1700000001, box: boxA}
	alice := 0.93
	ff.objs["1700000000.0-alice"] = &frigateObject{camera: "garden", label: "bird", frame: scene(640, 480, boxB, blue), frameTime: 1700000001,
		box: boxB, sub: "Alice", subScore: &alice}

	rec := &recorder{seen: map[string][]*imageio.RGB{}}
	var logs bytes.Buffer
	var logMu sync.Mutex
	l, err := New(Config{Frigate: srv.URL, User: "admin", Password: "frigate-pass", Classify: rec, Labels: []string{"bird"},
		MinBox: 64, Height: 256, Backoff: time.Millisecond, Log: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var st Stats
	go func() {
		var err error
		st, err = Listen(ctx, MQTT{Broker: broker, Username: "flycl", Password: "flycl-mqtt", ClientID: "flycl-test"}, l)
		done <- err
	}()
	pub := paho.NewClient(paho.NewClientOptions().AddBroker(strings.Replace(broker, "mqtt://", "tcp://", 1)).
		SetClientID("frigate").SetUsername("frigate").SetPassword("mqtt-secret"))
	if tok := pub.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer pub.Disconnect(100)
	var updates []string
	var upMu sync.Mutex
	if tok := pub.Subscribe("frigate/tracked_object_update", 1, func(_ paho.Client, m paho.Message) {
		upMu.Lock()
		updates = append(updates, string(m.Payload()))
		upMu.Unlock()
	}); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	send := func(typ, id string) {
		ff.mu.Lock()
		o := ff.objs[id]
		after := o.eventJSON(id)
		ff.mu.Unlock()
		msg := fmt.Sprintf(`{"before":%s,"after":%s,"type":%q}`, after, after, typ)
		if tok := pub.Publish("frigate/events", 1, false, msg); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("after 30 s: %s; stats %+v; requests %q", what, l.Stats(), ff.requests)
			}
		}
	}
	// The labeller subscribes after connecting: resend the first message until it was counted.
	wait("the first message counted", func() bool {
		send("new", "1700000000.0-robin")
		time.Sleep(50 * time.Millisecond)
		return l.Stats().Classified > 0
	})
	send("new", "1700000000.0-alice")
	for i := range 4 { // better snapshots of the robin: new frame times
		ff.mu.Lock()
		ff.objs["1700000000.0-robin"].frameTime = 1700000002 + float64(i)
		ff.mu.Unlock()
		send("update", "1700000000.0-robin")
		wait("a try per snapshot", func() bool { return l.Stats().Classified >= int64(2+i) || l.Stats().Labelled > 0 })
	}
	wait("the robin labelled", func() bool { return l.Stats().Labelled == 1 })
	wait("a tracked_object_update", func() bool { upMu.Lock(); defer upMu.Unlock(); return len(updates) == 1 })
	var up map[string]any
	upMu.Lock()
	json.Unmarshal([]byte(updates[0]), &up)
	upMu.Unlock()
	// the fields of Frigate's own classifier's message (embeddings/maintainer.py)
	if up["type"] != "classification" || up["id"] != "1700000000.0-robin" || up["camera"] != "garden" || up["sub_label"] != "robin" ||
		up["score"] != 0.9 || up["model"] != "flycl" || up["timestamp"] == nil {
		t.Fatalf("tracked_object_update %s", updates[0])
	}
	send("update", "1700000000.0-robin") // carries the sub-label flycl set: no new try, no post
	// A message over MaxMessage is dropped as it arrives and counted as
	// refused; the connection goes on (the ends below are still counted).
	if tok := pub.Publish("frigate/events", 1, false, bytes.Repeat([]byte{' '}, 2*MaxMessage)); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
	wait("the large message refused", func() bool { return l.Stats().Bad == 1 })
	ff.mu.Lock()
	ff.objs["1700000000.0-robin"].ended = true
	ff.mu.Unlock()
	send("end", "1700000000.0-robin")
	send("end", "1700000000.0-alice")
	wait("the ends counted", func() bool { return l.Stats().Skipped[SkipEnd] == 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if want := []string{"1700000000.0-robin robin 0.9000"}; fmt.Sprint(ff.posts) != fmt.Sprint(want) {
		t.Fatalf("posts %q, want %q", ff.posts, want)
	}
	if ff.objs["1700000000.0-alice"].sub != "Alice" {
		t.Fatalf("face recognition's sub-label replaced by %q", ff.objs["1700000000.0-alice"].sub)
	}
	if st.Skipped[SkipOtherSubLabel] != 1 || st.Labelled != 1 || st.Errors != 0 || st.Classified != 3 || st.Bad != 1 {
		t.Fatalf("stats %+v: want 3 tries of the robin, its label, Alice's left alone", st)
	}
	// Every crop classified is Frigate's clean crop, resized to 256: compared with it where
	// Frigate's drawing (box and label, drawn by default) would change the crop by more than 30
	// levels, the crop is within JPEG's error (quality 95 of this smooth picture: a few levels
	// on average), where a drawn crop differs by some hundred.
	clean := renderSnapshot(ff.objs["1700000000.0-robin"].frame, boxA, false, false, true, 256)
	drawn := renderSnapshot(ff.objs["1700000000.0-robin"].frame, boxA, true, false, true, 256)
	drawnRGB := &imageio.RGB{W: 256, H: 256, Pix: make([]uint8, 3*256*256)}
	for i := range 256 * 256 {
		copy(drawnRGB.Pix[3*i:3*i+3], drawn.Pix[4*i:4*i+3])
	}
	mask := func(x, y int) bool {
		p, q := drawn.Pix[y*drawn.Stride+4*x:], clean.Pix[y*clean.Stride+4*x:]
		return max(absDiff(p[0], q[0]), absDiff(p[1], q[1]), absDiff(p[2], q[2])) > 30
	}
	if d := meanAbs(drawnRGB, clean, mask); d < 60 {
		t.Fatalf("the drawn crop differs from the clean one by %.2f only where drawn: the check could not see a box", d)
	}
	if len(rec.seen["robin"]) != 3 {
		t.Fatalf("%d robin crops classified, want 3", len(rec.seen["robin"]))
	}
	for _, img := range rec.seen["robin"] {
		if img.W != 256 || img.H != 256 {
			t.Fatalf("crop %d×%d, want 256×256 (height=256 of a square crop)", img.W, img.H)
		}
		if d := meanAbs(img, clean, mask); d > 8 {
			t.Fatalf("crop differs from the clean crop by %.2f levels where a box would be drawn", d)
		}
	}
	for _, r := range ff.requests {
		if strings.Contains(r, "snapshot.jpg") && !strings.Contains(r, "bbox=0") {
			t.Fatalf("snapshot asked without bbox=0: %s", r)
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}

// TestOwnSubLabelBeforeResponse: Frigate publishes the object with the
// sub-label flycl set as soon as it is set, so that message can arrive
// before the POST's response. It is flycl's own answer, not another
// source's: the object counts as decided, not as "another sub-label".
func TestOwnSubLabelBeforeResponse(t *testing.T) {
	box := [4]int{200, 150, 320, 260}
	ff := &fakeFrigate2{objs: map[string]*frigateObject{
		"r": {camera: "garden", label: "bird", frame: scene(640, 480, box, color.RGBA{220, 30, 30, 255}), frameTime: 1, box: box},
	}}
	srv := httptest.NewServer(ff)
	defer srv.Close()
	l, err := New(Config{Frigate: srv.URL, Classify: &recorder{seen: map[string][]*imageio.RGB{}}, MinBox: 64, Backoff: time.Millisecond, Rule: oneTry})
	if err != nil {
		t.Fatal(err)
	}
	echoed := 0
	ff.onPost = func(msg []byte) { l.Handle(msg); echoed++ }
	ff.mu.Lock()
	first := ff.objs["r"].eventJSON("r")
	ff.mu.Unlock()
	l.Handle([]byte(`{"before":null,"after":` + first + `,"type":"new"}`))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	for end := time.Now().Add(10 * time.Second); l.Stats().Labelled == 0 && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
	}
	cancel()
	<-done
	s := l.Stats()
	if echoed != 1 || s.Labelled != 1 || s.Skipped[SkipDecided] != 1 || s.Skipped[SkipOtherSubLabel] != 0 {
		t.Fatalf("echoed %d, stats %+v: want the echo of flycl's own sub-label counted as decided", echoed, s)
	}
}
