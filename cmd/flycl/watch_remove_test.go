package main

import (
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// TestWatchMQTTRemove: flycl watch --mqtt-remove retires a camera: its
// retained topics and its Home Assistant discovery configs (a zone's
// sensor and image among them) are emptied; another camera's are kept.
func TestWatchMQTTRemove(t *testing.T) {
	broker := mosquittoBroker(t)
	if broker == "" {
		t.Skip("mosquitto not installed")
	}
	c := paho.NewClient(paho.NewClientOptions().AddBroker(strings.Replace(broker, "mqtt://", "tcp://", 1)).SetClientID("test-seed"))
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	seed := map[string]string{
		"flycl/desk/state": "car", "flycl/desk/availability": "offline", "flycl/desk/gate/state": "unrecognized",
		"homeassistant/sensor/flycl_desk/answer/config":      `{"name":"Answer"}`,
		"homeassistant/sensor/flycl_desk/gate_answer/config": `{"name":"gate"}`,
		"homeassistant/image/flycl_desk/gate_crop/config":    `{"name":"gate crop"}`,
		"flycl/drive/state": "car", "homeassistant/sensor/flycl_drive/answer/config": `{"name":"Answer"}`,
	}
	for tp, v := range seed {
		if tok := c.Publish(tp, 1, true, v); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	c.Disconnect(100)
	out, err := runCLI(t, "watch", "--mqtt", broker, "--camera", "desk", "--mqtt-remove")
	if err != nil {
		t.Fatalf("--mqtt-remove: %v\n%s", err, out)
	}
	if n := strings.Count(out, "removed "); n != 6 {
		t.Fatalf("output %q: want 6 topics removed", out)
	}
	got := retained(t, broker, "flycl/#", "homeassistant/#")
	for tp, v := range got {
		if v != "" && !strings.Contains(tp, "drive") {
			t.Fatalf("%s still retained: %q", tp, v)
		}
	}
	if got["flycl/drive/state"] != "car" || got["homeassistant/sensor/flycl_drive/answer/config"] == "" {
		t.Fatalf("another camera's topics touched: %v", got)
	}
	if _, err := runCLI(t, "watch", "--camera", "desk", "--mqtt-remove"); err == nil || !strings.Contains(err.Error(), "--mqtt") {
		t.Fatalf("--mqtt-remove without --mqtt: %v", err)
	}
}
