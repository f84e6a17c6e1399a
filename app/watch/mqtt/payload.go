package mqtt

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/watch"
)

// Attrs is the JSON of the attributes topic: the event that set the
// state and the prediction of the frame that confirmed it.
type Attrs struct {
	Class string `json:"class"` // the answer: a class name or "unknown"
	// State is the state published (State: NotRecognized for "unknown").
	State string `json:"state"`
	// Guess is the best class even when the answer is unknown, and
	// Margin its score less the second's (absent with one class).
	Guess    string   `json:"guess,omitempty"`
	Margin   *float32 `json:"margin,omitempty"`
	Previous string   `json:"previous"` // the answer before ("" for the first)
	// Probability is the top class's calibrated probability (absent for a
	// model without a fitted temperature).
	Probability *float64       `json:"probability,omitempty"`
	Score       float32        `json:"score"` // the top class's score
	Unknown     bool           `json:"unknown"`
	Top         []flycl.Ranked `json:"top"`
	// Model names the model that answered (the zone's own for a zone
	// that has one; absent when not told).
	Model        string    `json:"model,omitempty"`
	ModelVersion uint64    `json:"model_version"`
	Time         time.Time `json:"time"`  // when the confirming frame arrived
	Frame        int       `json:"frame"` // the frame that confirmed the answer
	Since        int       `json:"since"` // the first frame of its run
	EventID      int64     `json:"event_id"`
	Zone         string    `json:"zone,omitempty"` // the zone (absent without zones)
	Source       string    `json:"source"`
}

// Attributes returns the attributes of u for a model at version (the
// version the prediction names, when it names one: a model picked up
// without a restart).
func Attributes(u watch.Update, version uint64) Attrs {
	if v := u.Prediction.ModelVersion; v != 0 {
		version = v
	}
	top := u.Prediction.Top
	if top == nil {
		top = []flycl.Ranked{}
	}
	a := Attrs{Class: u.Class, State: State(u.Class, rejected(u)), Previous: u.Previous, Probability: u.Prediction.Probability, Score: u.Score,
		Unknown: u.Prediction.Unknown, Top: top, ModelVersion: version, Time: u.Time, Frame: u.Frame, Since: u.Since,
		EventID: u.ID, Source: u.Source, Zone: u.Zone}
	if len(top) > 0 {
		a.Guess = top[0].Name
	}
	if len(top) > 1 {
		m := top[0].Score - top[1].Score
		a.Margin = &m
	}
	return a
}

// Device is the device block of a Home Assistant discovery message.
type Device struct {
	Identifiers  []string `json:"identifiers"`
	Name         string   `json:"name"`
	Model        string   `json:"model,omitempty"`
	Manufacturer string   `json:"manufacturer"`
	SWVersion    string   `json:"sw_version,omitempty"`
}

// Discovery is Home Assistant's MQTT discovery message for a sensor
// (https://www.home-assistant.io/integrations/sensor.mqtt/).
type Discovery struct {
	Name                string `json:"name"`
	UniqueID            string `json:"unique_id"`
	StateTopic          string `json:"state_topic"`
	JSONAttributesTopic string `json:"json_attributes_topic"`
	AvailabilityTopic   string `json:"availability_topic"`
	PayloadAvailable    string `json:"payload_available"`
	PayloadNotAvailable string `json:"payload_not_available"`
	QoS                 int    `json:"qos"`
	Icon                string `json:"icon"`
	Device              Device `json:"device"`
}

// DiscoveryMessage returns the Publisher's discovery message.
func (p *Publisher) DiscoveryMessage() Discovery {
	return Discovery{
		Name:                "Answer",
		UniqueID:            p.node + "_answer",
		StateTopic:          p.topics.State,
		JSONAttributesTopic: p.topics.Attributes,
		AvailabilityTopic:   p.topics.Availability,
		PayloadAvailable:    Online,
		PayloadNotAvailable: Offline,
		QoS:                 1,
		Icon:                "mdi:cctv",
		Device: Device{Identifiers: []string{p.node}, Name: "flycl " + p.o.Camera, Model: p.o.Model,
			Manufacturer: "flycl", SWVersion: p.o.SWVersion},
	}
}

// ZoneDiscoveryMessage returns the discovery message of a zone's sensor:
// the camera's device, the zone's topics, a unique ID with the zone's
// name.
func (p *Publisher) ZoneDiscoveryMessage(zone string) Discovery {
	d := p.DiscoveryMessage()
	if zone == "" {
		return d
	}
	tp := p.ZoneTopics(zone)
	d.Name = zone
	d.UniqueID = p.node + "_" + nodeID(zone) + "_answer"
	d.StateTopic, d.JSONAttributesTopic = tp.State, tp.Attributes
	return d
}

func (p *Publisher) discovery() []byte {
	b, _ := json.Marshal(p.DiscoveryMessage())
	return b
}

// ImageDiscovery is Home Assistant's MQTT discovery message for an image
// entity (https://www.home-assistant.io/integrations/image.mqtt/): the
// JPEG bytes published on ImageTopic.
type ImageDiscovery struct {
	Name                string `json:"name"`
	UniqueID            string `json:"unique_id"`
	ImageTopic          string `json:"image_topic"`
	ContentType         string `json:"content_type"`
	AvailabilityTopic   string `json:"availability_topic"`
	PayloadAvailable    string `json:"payload_available"`
	PayloadNotAvailable string `json:"payload_not_available"`
	Icon                string `json:"icon"`
	Device              Device `json:"device"`
}

// ImageDiscoveryMessage returns the discovery message of the image
// entity of a zone ("": the camera's, without zones): the camera's
// device, the zone's image topic.
func (p *Publisher) ImageDiscoveryMessage(zone string) ImageDiscovery {
	d := p.DiscoveryMessage()
	name, id := "Crop", p.node+"_crop"
	if zone != "" {
		name, id = zone+" crop", p.node+"_"+nodeID(zone)+"_crop"
	}
	return ImageDiscovery{Name: name, UniqueID: id, ImageTopic: p.ZoneTopics(zone).Image, ContentType: "image/jpeg",
		AvailabilityTopic: d.AvailabilityTopic, PayloadAvailable: Online, PayloadNotAvailable: Offline, Icon: "mdi:image", Device: d.Device}
}

// EventDiscovery is Home Assistant's MQTT discovery message for an event
// entity (components/mqtt/event.py: state_topic and event_types
// required).
type EventDiscovery struct {
	Name                string   `json:"name"`
	UniqueID            string   `json:"unique_id"`
	StateTopic          string   `json:"state_topic"`
	EventTypes          []string `json:"event_types"`
	AvailabilityTopic   string   `json:"availability_topic"`
	PayloadAvailable    string   `json:"payload_available"`
	PayloadNotAvailable string   `json:"payload_not_available"`
	QoS                 int      `json:"qos"`
	Icon                string   `json:"icon"`
	Device              Device   `json:"device"`
}

// EventDiscoveryMessage returns the discovery message of the event entity
// of a zone ("": the camera's): one event per answer, its type the state
// published (State), the types every class's state and NotRecognized.
func (p *Publisher) EventDiscoveryMessage(zone string) EventDiscovery {
	d := p.DiscoveryMessage()
	name, id := "Answer event", p.node+"_answer_event"
	if zone != "" {
		name, id = zone+" event", p.node+"_"+nodeID(zone)+"_answer_event"
	}
	types := []string{NotRecognized}
	for _, c := range p.o.Classes {
		if t := State(c, false); !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return EventDiscovery{Name: name, UniqueID: id, StateTopic: p.ZoneTopics(zone).Event, EventTypes: types,
		AvailabilityTopic: d.AvailabilityTopic, PayloadAvailable: Online, PayloadNotAvailable: Offline, QoS: 1,
		Icon: "mdi:cctv", Device: d.Device}
}

// eventPayload is an answer's event: event_type (the state) and the
// attributes Home Assistant keeps with it.
func eventPayload(a Attrs) map[string]any {
	m := map[string]any{"event_type": a.State, "class": a.Class, "guess": a.Guess, "zone": a.Zone,
		"event_id": a.EventID, "time": a.Time}
	if a.Probability != nil {
		m["probability"] = *a.Probability
	}
	if a.Margin != nil {
		m["margin"] = *a.Margin
	}
	return m
}
