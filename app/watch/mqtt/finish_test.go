package mqtt

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/flycl/flycl/app/watch"
)

// TestFinish: Finish closes the publisher (a live broker then holds its
// availability "offline", as Close publishes) and returns ErrUnpublished
// exactly when the broker took no state (a port where no broker listens).
func TestFinish(t *testing.T) {
	b := startBroker(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "mqtt://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name, broker string
		unpublished  bool
	}{
		{"live broker", b.url(), false},
		{"no broker", dead, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sub *subscriber
			if !tc.unpublished {
				sub = subscribe(t, b, "flycl/#")
			}
			p, err := New(Options{Broker: tc.broker, Camera: "gate", MaxBackoff: 50 * time.Millisecond, Timeout: time.Second, Log: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			p.Start(time.Second)
			if _, err := watch.Run(context.Background(), watch.Config{Source: &frames{[]int{0, 0, 0}}, Classify: classes{}, Out: io.Discard,
				Updates: p, Debounce: 1, Log: quiet()}); err != nil {
				t.Fatal(err)
			}
			err = p.Finish(2 * time.Second)
			if errors.Is(err, ErrUnpublished) != tc.unpublished {
				t.Fatalf("Finish: %v; want unpublished %v", err, tc.unpublished)
			}
			if sub != nil {
				sub.last(t, p.Topics().Availability, is(Offline))
			}
		})
	}
}
