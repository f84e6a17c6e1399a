package mqtt

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// pairs is a file Source of 2×1 frames: the left pixel's red value
// indexes names for the left zone, the right pixel's for the right one.
type pairs struct{ left, right []int }

func (f *pairs) Open(context.Context) (watch.Stream, error) {
	return &pairStream{left: f.left, right: f.right}, nil
}
func (f *pairs) Live() bool     { return false }
func (f *pairs) String() string { return "pairs" }

type pairStream struct{ left, right []int }

func (s *pairStream) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	if len(s.left) == 0 {
		return nil, io.EOF
	}
	dst = imageio.NewRGB(2, 1)
	dst.Pix[0], dst.Pix[3] = uint8(s.left[0]), uint8(s.right[0])
	s.left, s.right = s.left[1:], s.right[1:]
	return dst, nil
}
func (s *pairStream) Close() error { return nil }

// TestZones: with two zones each has its own retained state and
// attributes under PREFIX/CAMERA/ZONE/ following its own half of the
// frames, its own Home Assistant sensor (a unique ID with the zone's
// name, the camera's device and availability), and the camera's own
// state topic stays unused.
func TestZones(t *testing.T) {
	b := startBroker(t)
	sub := subscribe(t, b, "flycl/#", "homeassistant/#")
	p, err := New(Options{Broker: b.url(), Camera: "drive", Zones: []string{"gate", "porch"}, Discovery: true, Model: "cam.flycl",
		MaxBackoff: 2 * time.Second, Timeout: 5 * time.Second, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	p.Start(5 * time.Second)
	defer p.Close(time.Second)
	zones, err := watch.ParseZones([]string{"gate=0,0,1,1", "porch=1,0,1,1"})
	if err != nil {
		t.Fatal(err)
	}
	// gate: car ×3 then empty ×3; porch: empty ×4 then car ×2 (debounce 2)
	left, right := []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 0, 0}
	if _, err := watch.Run(context.Background(), watch.Config{Source: &pairs{left, right}, Classify: classes{}, Zones: zones,
		Updates: p, Debounce: 2, Log: quiet()}); err != nil {
		t.Fatal(err)
	}
	if !p.Flush(10 * time.Second) {
		t.Fatal("the latest states were not published in 10 s")
	}
	for _, c := range []struct{ zone, state, previous string }{{"gate", "empty", "car"}, {"porch", "car", "empty"}} {
		tp := p.ZoneTopics(c.zone)
		if tp.State != "flycl/drive/"+c.zone+"/state" || tp.Attributes != "flycl/drive/"+c.zone+"/attributes" || tp.Availability != "flycl/drive/availability" {
			t.Fatalf("%s: topics %+v", c.zone, tp)
		}
		sub.last(t, tp.State, is(c.state))
		var a Attrs
		if err := json.Unmarshal([]byte(sub.last(t, tp.Attributes, func(s string) bool { return strings.Contains(s, `"class":"`+c.state+`"`) })), &a); err != nil {
			t.Fatal(err)
		}
		if a.Zone != c.zone || a.Previous != c.previous {
			t.Fatalf("%s: attributes %+v", c.zone, a)
		}
		var d Discovery
		if err := json.Unmarshal([]byte(sub.last(t, tp.Discovery, func(string) bool { return true })), &d); err != nil {
			t.Fatal(err)
		}
		if d.UniqueID != "flycl_drive_"+c.zone+"_answer" || d.StateTopic != tp.State || d.JSONAttributesTopic != tp.Attributes ||
			d.AvailabilityTopic != "flycl/drive/availability" || !slices.Equal(d.Device.Identifiers, []string{"flycl_drive"}) || d.Name != c.zone {
			t.Fatalf("%s: discovery %+v", c.zone, d)
		}
	}
	if s := sub.on("flycl/drive/state"); len(s) != 0 {
		t.Fatalf("the camera's state topic got %q with zones", s)
	}
	if s := sub.on(p.Topics().Discovery); len(s) != 0 {
		t.Fatalf("the camera's sensor was announced with zones: %q", s)
	}
}
