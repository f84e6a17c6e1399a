package frigate

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/flycl/flycl/internal/mqttlimit"
)

// MQTT says where Frigate's events are published.
type MQTT struct {
	// Broker is mqtt://HOST:PORT (or mqtts://).
	Broker string
	// Prefix is Frigate's topic_prefix (empty: "frigate").
	Prefix string
	// ClientID (empty: "flycl-frigate"), Username and Password.
	ClientID, Username, Password string
}

// Listen subscribes to <prefix>/events (QoS 1, again after every
// reconnection), hands each message to l.Handle and runs l until ctx is
// done; then it disconnects and returns l's counters.
func Listen(ctx context.Context, m MQTT, l *Labeller) (Stats, error) {
	u, err := url.Parse(m.Broker)
	if err != nil || u.Host == "" {
		return Stats{}, fmt.Errorf("frigate: --mqtt %q: want mqtt://HOST:PORT", m.Broker)
	}
	switch u.Scheme {
	case "mqtt", "tcp":
		u.Scheme = "tcp"
	case "mqtts", "ssl", "tls":
		u.Scheme = "ssl"
	default:
		return Stats{}, fmt.Errorf("frigate: --mqtt %q: want mqtt:// or mqtts://", m.Broker)
	}
	prefix := strings.TrimSuffix(m.Prefix, "/")
	if prefix == "" {
		prefix = "frigate"
	}
	topic := prefix + "/events"
	id := m.ClientID
	if id == "" {
		id = "flycl-frigate"
	}
	subscribed := make(chan error, 1)
	o := paho.NewClientOptions().AddBroker(u.String()).SetClientID(id).
		SetAutoReconnect(true).SetConnectRetry(true).SetMaxReconnectInterval(30 * time.Second).
		SetOrderMatters(true).SetCustomOpenConnectionFn(mqttlimit.Open(MaxMessage+1<<17, nil)) // a payload over MaxMessage (with its topic) is dropped as it arrives, not held
	if m.Username != "" {
		o.SetUsername(m.Username).SetPassword(m.Password)
	}
	o.SetOnConnectHandler(func(c paho.Client) {
		t := c.Subscribe(topic, 1, func(_ paho.Client, msg paho.Message) { l.Handle(msg.Payload()) })
		go func() {
			t.Wait()
			l.cfg.Log.Info("frigate: subscribed", "topic", topic, "err", t.Error())
			select {
			case subscribed <- t.Error():
			default:
			}
		}()
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := paho.NewClient(o)
	c.Connect() // retries in the background until ctx is done
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	select {
	case err := <-subscribed:
		if err != nil {
			c.Disconnect(250)
			cancel()
			<-done
			return l.Stats(), fmt.Errorf("frigate: subscribe %s: %w", topic, err)
		}
	case <-ctx.Done():
	}
	<-ctx.Done()
	c.Disconnect(250)
	<-done
	return l.Stats(), nil
}
