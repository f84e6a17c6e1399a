package frigate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

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

// Listen logs in to Frigate (Labeller.Login), connects to the broker,
// subscribes to <prefix>/events (QoS 1, again after every reconnection),
// hands each message to l.Handle and runs l until ctx is done; then it
// disconnects and returns l's counters.
//
// A failure to log in to Frigate, and a broker that refuses the user or
// password, are logged at once and returned (trying again would not
// help); a broker that cannot be reached is logged at once with its
// reason at every attempt and tried again, backing off to 30 s.
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
		SetOrderMatters(true).SetCustomOpenConnectionFn(mqttlimit.Open(MaxMessage+1<<17, l.tooLarge)) // a payload over MaxMessage (with its topic) is dropped as it arrives, not held
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
	// The first connection is made by connect below, which logs every
	// failure with its reason; paho reconnects after a loss.
	o.SetConnectRetry(false)
	o.SetConnectionLostHandler(func(_ paho.Client, err error) {
		l.cfg.Log.Warn("frigate: MQTT connection lost, reconnecting", "broker", m.Broker, "err", err)
	})
	if err := l.Login(ctx); err != nil {
		l.cfg.Log.Error("frigate: login failed", "err", err)
		return l.Stats(), err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := paho.NewClient(o)
	if err := connect(ctx, c, m.Broker, l.cfg.Log); err != nil {
		return l.Stats(), err
	}
	if !l.cfg.NoUpdate {
		// As Frigate's MQTT client publishes it: <prefix>/tracked_object_update,
		// not retained, at QoS 0 (Frigate's mqtt.qos default).
		update := prefix + "/tracked_object_update"
		l.mu.Lock()
		l.notify = func(payload []byte) { c.Publish(update, 0, false, payload) }
		l.mu.Unlock()
	}
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

// connect connects c, logging each failure at once with its reason and
// trying again (1 s, doubling to 30 s) until ctx is done; a refused user
// or password is returned (ctx's end is not an error).
func connect(ctx context.Context, c paho.Client, broker string, log *slog.Logger) error {
	wait := time.Second
	for {
		tok := c.Connect()
		select {
		case <-tok.Done():
		case <-ctx.Done():
			return nil
		}
		err := tok.Error()
		if err == nil {
			log.Info("frigate: connected", "broker", broker)
			return nil
		}
		if errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword) || errors.Is(err, packets.ErrorRefusedNotAuthorised) {
			log.Error("frigate: MQTT broker refused the login", "broker", broker, "err", err)
			return fmt.Errorf("frigate: MQTT broker %s: %w (--mqtt-user, --mqtt-password-file)", broker, err)
		}
		log.Error("frigate: MQTT connection failed", "broker", broker, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// tooLarge logs a message the connection dropped as it arrived because
// it was over the limit. Its emptied payload still reaches Handle, which
// counts it as received and refused.
func (l *Labeller) tooLarge(topic string, size int64) {
	l.cfg.Log.Warn("frigate: message over the limit dropped", "topic", topic, "bytes", size, "limit", MaxMessage)
}
