package mqttlimit

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// startMosquitto runs Debian's mosquitto on a free port of 127.0.0.1 and
// returns its address (skipped when it is not installed).
func startMosquitto(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/mosquitto"); err != nil {
			t.Skip("mosquitto not installed (apt-get install mosquitto): the broker test needs a real broker")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\n", l.Addr().(*net.TCPAddr).Port)
	if os.Geteuid() == 0 {
		conf += "user root\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "m.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", filepath.Join(dir, "m.conf"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(end) {
			t.Fatalf("mosquitto did not listen on %s in 5 s", addr)
		}
	}
}

// TestBroker: a paho client connected through Open to a real broker gets
// the messages within the limit whole, a QoS 1 message over it with its
// topic and an empty payload (acknowledged: the broker sends it once, and
// the client stays connected), and the messages after it whole.
func TestBroker(t *testing.T) {
	addr := startMosquitto(t)
	const limit = 1024
	type got struct {
		topic   string
		payload []byte
	}
	var mu sync.Mutex
	var msgs []got
	var drops []int64
	all := make(chan struct{})
	co := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID("limited").SetAutoReconnect(false).
		SetConnectTimeout(5 * time.Second).
		SetCustomOpenConnectionFn(Open(limit, func(topic string, size int64) {
			mu.Lock()
			drops = append(drops, size)
			mu.Unlock()
		}))
	sub := paho.NewClient(co)
	if tok := sub.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer sub.Disconnect(100)
	tok := sub.Subscribe("frigate/events", 1, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		defer mu.Unlock()
		msgs = append(msgs, got{m.Topic(), m.Payload()})
		if len(msgs) == 3 {
			close(all)
		}
	})
	if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	pub := paho.NewClient(paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID("publisher"))
	if tok := pub.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("publisher connect: %v", tok.Error())
	}
	defer pub.Disconnect(100)
	big := bytes.Repeat([]byte{'x'}, 1<<20)
	for _, p := range [][]byte{[]byte("before"), big, []byte("after")} {
		if tok := pub.Publish("frigate/events", 1, false, p); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatalf("got %d of 3 messages", len(msgs))
	}
	mu.Lock()
	defer mu.Unlock()
	if string(msgs[0].payload) != "before" || len(msgs[1].payload) != 0 || msgs[1].topic != "frigate/events" || string(msgs[2].payload) != "after" {
		t.Fatalf("messages: %q / %d bytes on %q / %q", msgs[0].payload, len(msgs[1].payload), msgs[1].topic, msgs[2].payload)
	}
	// the remaining length: topic (2 + 14), packet id (2), payload
	if len(drops) != 1 || drops[0] != 2+14+2+1<<20 {
		t.Fatalf("drops %v", drops)
	}
	if !sub.IsConnectionOpen() {
		t.Fatal("the client lost its connection")
	}
}
