package mqtt

import (
	"fmt"
	"slices"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Home Assistant deletes an entity whose discovery topic receives an
// empty payload (components/mqtt/discovery.py: an empty payload is an
// empty discovery payload, which removes what was discovered under that
// topic's discovery id). An entity flycl no longer publishes (a zone
// taken out of the configuration, the image entity once Image is off)
// would otherwise stay in Home Assistant for ever, held by its retained
// config on the broker.

// discoveryTopics returns every discovery topic the Publisher announces.
func (p *Publisher) discoveryTopics() []string {
	var out []string
	zones := p.o.Zones
	if len(zones) == 0 {
		zones = []string{""}
	}
	for _, z := range zones {
		tp := p.ZoneTopics(z)
		for _, t := range []string{tp.Discovery, tp.ImageDiscovery, tp.EventDiscovery} {
			if t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// nodeFilter is the topic filter of every discovery config of the
// Publisher's node: DISCOVERY_PREFIX/COMPONENT/NODE_ID/OBJECT_ID/config.
func (p *Publisher) nodeFilter() string {
	return p.o.DiscoveryPrefix + "/+/" + p.node + "/+/config"
}

// clearStale subscribes to the node's discovery configs; each retained
// config the broker holds that the Publisher does not announce is
// replaced by an empty retained payload, which deletes its entity. The
// node id is flycl's own (the camera's), so no other program's entity
// is touched.
func (p *Publisher) clearStale(c paho.Client) {
	if !p.o.Discovery {
		return
	}
	current := p.discoveryTopics()
	c.Subscribe(p.nodeFilter(), 1, func(_ paho.Client, m paho.Message) {
		if !m.Retained() || len(m.Payload()) == 0 || slices.Contains(current, m.Topic()) {
			return
		}
		topic := m.Topic()
		go func() {
			if err := p.publish(topic, nil); err != nil {
				p.log.Warn("mqtt: cannot remove a stale discovery config", "topic", topic, "err", err)
				return
			}
			p.log.Info("mqtt: removed the entity of a stale discovery config", "topic", topic)
		}()
	})
}

// Remove retires the camera: it connects, collects for wait the retained
// topics of the camera (PREFIX/CAMERA/#) and of its node's discovery
// configs, and empties each (a retained empty payload deletes the
// retained message; an empty discovery config deletes the entity in
// Home Assistant). It returns the topics emptied. Remove is used instead
// of Start, on a Publisher that is not started.
func (p *Publisher) Remove(wait time.Duration) ([]string, error) {
	p.mu.Lock()
	p.removing = true // onConnect announces nothing
	p.mu.Unlock()
	tok := p.client.Connect()
	if !tok.WaitTimeout(p.o.Timeout) {
		p.client.Disconnect(0)
		return nil, fmt.Errorf("mqtt: %s: not reached in %s", p.o.Broker, p.o.Timeout)
	}
	if err := tok.Error(); err != nil {
		return nil, fmt.Errorf("mqtt: %s: %w", p.o.Broker, err)
	}
	defer p.client.Disconnect(250)
	var mu sync.Mutex
	seen := map[string]bool{}
	collect := func(_ paho.Client, m paho.Message) {
		if m.Retained() && len(m.Payload()) > 0 {
			mu.Lock()
			seen[m.Topic()] = true
			mu.Unlock()
		}
	}
	// The discovery filter is subscribed also without Discovery: a camera
	// that had it may be retired after it was turned off.
	for _, f := range []string{p.nodeFilter(), p.o.Prefix + "/" + p.o.Camera + "/#"} {
		t := p.client.Subscribe(f, 1, collect)
		if !t.WaitTimeout(p.o.Timeout) || t.Error() != nil {
			return nil, fmt.Errorf("mqtt: subscribe %s: %v", f, t.Error())
		}
	}
	time.Sleep(wait) // a broker sends the retained messages right after the subscription
	p.client.Unsubscribe(p.nodeFilter(), p.o.Prefix+"/"+p.o.Camera+"/#").WaitTimeout(p.o.Timeout)
	mu.Lock()
	topics := make([]string, 0, len(seen))
	for t := range seen {
		topics = append(topics, t)
	}
	mu.Unlock()
	// the configs first: Home Assistant removes the entities before their states go
	slices.SortFunc(topics, func(a, b string) int {
		ca, cb := len(a) > 7 && a[len(a)-7:] == "/config", len(b) > 7 && b[len(b)-7:] == "/config"
		switch {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return cmpString(a, b)
	})
	for _, t := range topics {
		if err := p.publish(t, nil); err != nil {
			return topics, err
		}
	}
	return topics, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
