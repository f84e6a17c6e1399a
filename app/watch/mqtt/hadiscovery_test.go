package mqtt

// A validator of Home Assistant MQTT discovery messages, written from
// Home Assistant's source (home-assistant/core,
// homeassistant/components/mqtt/):
//
//   - discovery.py TOPIC_MATCHER: the topic is
//     PREFIX/COMPONENT/[NODE_ID/]OBJECT_ID/config with NODE_ID and
//     OBJECT_ID of [a-zA-Z0-9_-]+, COMPONENT a supported platform
//     (const.py SUPPORTED_COMPONENTS: sensor, image, event, …);
//   - an empty payload removes what the topic discovered; any other
//     payload is a JSON object whose keys may be abbreviated
//     (abbreviations.py ABBREVIATIONS and DEVICE_ABBREVIATIONS, expanded
//     by discovery.py _replace_all_abbreviations);
//   - schemas.py MQTT_ENTITY_DEVICE_INFO_SCHEMA: a device has at least
//     one of identifiers or connections (validate_device_has_at_least_
//     one_identifier), its other keys strings;
//     MQTT_AVAILABILITY_SINGLE_SCHEMA: availability_topic a valid
//     subscribe topic, payload_available and payload_not_available
//     strings; valid_qos_schema: qos 0, 1 or 2;
//   - sensor.py PLATFORM_SCHEMA_MODERN: state_topic required (a valid
//     subscribe topic), json_attributes_topic a valid subscribe topic;
//     image.py: exactly one of image_topic and url_topic, content_type
//     with image_topic;
//   - entity.py: an entity with a device needs a unique_id to be linked to
//     it, and unique ids are unique in the entity registry.
//
// Keys outside the platform's schema are refused here (Home Assistant
// drops them silently, which would hide a misspelt key).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var topicMatcher = regexp.MustCompile(`^(?P<component>\w+)/(?:(?P<node_id>[a-zA-Z0-9_-]+)/)?(?P<object_id>[a-zA-Z0-9_-]+)/config$`)

// abbreviations are the entries of abbreviations.py for the keys flycl
// may send.
var abbreviations = map[string]string{"avty_t": "availability_topic", "pl_avail": "payload_available",
	"pl_not_avail": "payload_not_available", "stat_t": "state_topic", "json_attr_t": "json_attributes_topic",
	"uniq_id": "unique_id", "dev": "device", "ic": "icon", "qos": "qos", "name": "name", "img_t": "image_topic",
	"cont_type": "content_type", "url_t": "url_topic", "val_tpl": "value_template", "obj_id": "object_id", "evt_typ": "event_types"}
var deviceAbbreviations = map[string]string{"ids": "identifiers", "cns": "connections", "mf": "manufacturer",
	"mdl": "model", "name": "name", "sw": "sw_version", "hw": "hw_version", "sa": "suggested_area", "cu": "configuration_url"}

var common = []string{"name", "unique_id", "availability_topic", "payload_available", "payload_not_available", "icon",
	"device", "qos", "object_id", "json_attributes_topic", "enabled_by_default", "entity_category"}

// platforms: each platform's required keys and its other keys.
var platforms = map[string]struct{ required, optional []string }{
	"sensor": {[]string{"state_topic"}, []string{"value_template", "force_update", "expire_after", "unit_of_measurement", "device_class", "state_class"}},
	"image":  {nil, []string{"image_topic", "url_topic", "content_type", "image_encoding", "url_template"}},
	"event":  {[]string{"state_topic", "event_types"}, []string{"value_template", "device_class"}},
}

// validSubscribeTopic is util.py valid_subscribe_topic: not empty, at
// most 65535 bytes of UTF-8 without NUL, '+' and '#' only as whole
// levels, '#' last.
func validSubscribeTopic(t string) error {
	if t == "" || len(t) > 65535 || !utf8.ValidString(t) || strings.ContainsRune(t, 0) {
		return fmt.Errorf("topic %q: empty, too long, not UTF-8 or with a NUL", t)
	}
	levels := strings.Split(t, "/")
	for i, l := range levels {
		if strings.Contains(l, "+") && l != "+" || strings.Contains(l, "#") && (l != "#" || i != len(levels)-1) {
			return fmt.Errorf("topic %q: a wildcard not a whole level", t)
		}
	}
	return nil
}

// validateDiscovery checks one discovery message; ids collects the unique
// ids seen (for uniqueness across messages).
func validateDiscovery(prefix, topic string, payload []byte, ids map[string]string) error {
	rest, ok := strings.CutPrefix(topic, prefix+"/")
	m := topicMatcher.FindStringSubmatch(rest)
	if !ok || m == nil {
		return fmt.Errorf("%s: not PREFIX/COMPONENT/[NODE_ID/]OBJECT_ID/config", topic)
	}
	component := m[1]
	spec, known := platforms[component]
	if !known {
		return fmt.Errorf("%s: platform %q not one flycl validates", topic, component)
	}
	if len(payload) == 0 {
		return nil // removes the entity
	}
	var raw map[string]any
	if err := json.Unmarshal(payload, &raw); err != nil {
		return fmt.Errorf("%s: not a JSON object: %v", topic, err)
	}
	cfg := map[string]any{}
	for k, v := range raw {
		if full, ok := abbreviations[k]; ok {
			k = full
		}
		cfg[k] = v
	}
	allowed := map[string]bool{}
	for _, k := range append(append(append([]string{}, common...), spec.required...), spec.optional...) {
		allowed[k] = true
	}
	for k := range cfg {
		if !allowed[k] {
			return fmt.Errorf("%s: key %q not in the %s schema", topic, k, component)
		}
	}
	for _, k := range spec.required {
		if _, ok := cfg[k]; !ok {
			return fmt.Errorf("%s: required key %q missing", topic, k)
		}
	}
	for k, v := range cfg {
		if strings.HasSuffix(k, "_topic") {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: %s is not a string", topic, k)
			}
			if err := validSubscribeTopic(s); err != nil {
				return fmt.Errorf("%s: %s: %v", topic, k, err)
			}
		}
	}
	if component == "image" {
		_, img := cfg["image_topic"]
		_, url := cfg["url_topic"]
		if img == url {
			return fmt.Errorf("%s: exactly one of image_topic and url_topic", topic)
		}
		if _, ok := cfg["content_type"]; img && !ok {
			return fmt.Errorf("%s: image_topic without content_type", topic)
		}
	}
	if component == "event" {
		types, ok := cfg["event_types"].([]any)
		if !ok || len(types) == 0 {
			return fmt.Errorf("%s: event_types is not a list of strings", topic)
		}
		for _, e := range types {
			if _, ok := e.(string); !ok {
				return fmt.Errorf("%s: event type %v is not a string", topic, e)
			}
		}
	}
	if q, ok := cfg["qos"]; ok {
		if f, ok := q.(float64); !ok || (f != 0 && f != 1 && f != 2) {
			return fmt.Errorf("%s: qos %v not 0, 1 or 2", topic, q)
		}
	}
	for _, k := range []string{"payload_available", "payload_not_available", "name", "icon", "unique_id"} {
		if v, ok := cfg[k]; ok {
			if _, ok := v.(string); !ok {
				return fmt.Errorf("%s: %s is not a string", topic, k)
			}
		}
	}
	if _, ok := cfg["availability_topic"]; !ok {
		return fmt.Errorf("%s: no availability_topic: the entity would stay available while flycl is gone", topic)
	}
	uid, _ := cfg["unique_id"].(string)
	if d, ok := cfg["device"]; ok {
		dev, ok := d.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: device is not an object", topic)
		}
		full := map[string]any{}
		for k, v := range dev {
			if f, ok := deviceAbbreviations[k]; ok {
				k = f
			}
			full[k] = v
		}
		ids, _ := full["identifiers"].([]any)
		cns, _ := full["connections"].([]any)
		if len(ids) == 0 && len(cns) == 0 {
			return fmt.Errorf("%s: device without identifiers or connections", topic)
		}
		for k, v := range full {
			switch k {
			case "identifiers", "connections":
			case "manufacturer", "model", "name", "sw_version", "hw_version", "suggested_area", "configuration_url", "serial_number", "via_device":
				if _, ok := v.(string); !ok {
					return fmt.Errorf("%s: device %s is not a string", topic, k)
				}
			default:
				return fmt.Errorf("%s: device key %q unknown", topic, k)
			}
		}
		if uid == "" {
			return fmt.Errorf("%s: an entity with a device needs a unique_id", topic)
		}
	}
	if uid != "" {
		if other, dup := ids[uid]; dup && other != topic {
			return fmt.Errorf("%s: unique_id %q also used by %s", topic, uid, other)
		}
		ids[uid] = topic
	}
	return nil
}

func nodeHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// TestValidatorRefuses: the validator sees the faults it is written for.
func TestValidatorRefuses(t *testing.T) {
	good := `{"name":"a","unique_id":"u","state_topic":"s","availability_topic":"a","device":{"identifiers":["d"]}}`
	if err := validateDiscovery("homeassistant", "homeassistant/sensor/n/o/config", []byte(good), map[string]string{}); err != nil {
		t.Fatalf("a good message refused: %v", err)
	}
	for _, c := range []struct{ topic, payload string }{
		{"homeassistant/sensor/n o/o/config", good},
		{"homeassistant/sensor/n/o/conf", good},
		{"homeassistant/sensor/n/o/config", `{"name":"a","unique_id":"u","availability_topic":"a"}`},
		{"homeassistant/sensor/n/o/config", `{"name":"a","unique_id":"u","state_topic":"s/#/x","availability_topic":"a"}`},
		{"homeassistant/sensor/n/o/config", `{"name":"a","unique_id":"u","state_topic":"s","availability_topic":"a","device":{"name":"d"}}`},
		{"homeassistant/sensor/n/o/config", `{"name":"a","state_topic":"s","availability_topic":"a","device":{"ids":["d"]}}`},
		{"homeassistant/sensor/n/o/config", `{"name":"a","unique_id":"u","stat_t":"s","availability_topic":"a","qos":3}`},
		{"homeassistant/sensor/n/o/config", `{"name":"a","unique_id":"u","state_topc":"s","state_topic":"s","availability_topic":"a"}`},
		{"homeassistant/image/n/o/config", `{"name":"a","unique_id":"u","image_topic":"i","availability_topic":"a"}`},
		{"homeassistant/sensor/n/o/config", `[1]`},
	} {
		if err := validateDiscovery("homeassistant", c.topic, []byte(c.payload), map[string]string{}); err == nil {
			t.Errorf("%s %s accepted", c.topic, c.payload)
		}
	}
	ids := map[string]string{}
	validateDiscovery("homeassistant", "homeassistant/sensor/n/o/config", []byte(good), ids)
	if err := validateDiscovery("homeassistant", "homeassistant/sensor/n/p/config", []byte(good), ids); err == nil {
		t.Error("a unique_id used twice accepted")
	}
}

// TestState: the published state is never one Home Assistant reads as
// no value, and at most MaxState characters.
func TestState(t *testing.T) {
	long := strings.Repeat("é", 256)
	for _, c := range []struct {
		class    string
		rejected bool
		want     string
	}{
		{"unknown", true, NotRecognized},
		{"robin", false, "robin"},
		{"None", false, "None (class)"},
		{"unknown", false, "unknown (class)"},
		{"unavailable", false, "unavailable (class)"},
		{NotRecognized, false, NotRecognized + " (class)"},
		{strings.Repeat("é", 255), false, strings.Repeat("é", 255)},
		{long, false, strings.Repeat("é", 254) + "…"},
	} {
		got := State(c.class, c.rejected)
		if got != c.want {
			t.Errorf("State(%.20q, %v) = %.20q, want %.20q", c.class, c.rejected, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > MaxState || got == "unknown" || got == "unavailable" || got == "None" || got == "" {
			t.Errorf("State(%.20q) = %.20q (%d characters): Home Assistant would not keep it", c.class, got, n)
		}
	}
}

// TestNodeIDsDistinct: camera names that folded into one node id no
// longer do, names of the allowed characters keep theirs, and every
// discovery message of every configuration passes the validator.
func TestNodeIDsDistinct(t *testing.T) {
	seen := map[string]string{}
	ids := map[string]string{}
	for _, cam := range []string{"front door", "front_door", "front-door", "front.door", "garden", "Gärten", "Garten"} {
		for _, o := range []Options{
			{Broker: "mqtt://h", Camera: cam, Discovery: true},
			{Broker: "mqtt://h", Camera: cam, Discovery: true, Image: true, Zones: []string{"gate", "lawn"}, Classes: []string{"robin", "None"}},
		} {
			p, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			if other, ok := seen[p.node]; ok && other != cam {
				t.Fatalf("cameras %q and %q share node id %s", cam, other, p.node)
			}
			seen[p.node] = cam
			zones := append([]string{""}, o.Zones...)
			if len(o.Zones) > 0 {
				zones = o.Zones
			}
			for _, z := range zones {
				tp := p.ZoneTopics(z)
				b, _ := json.Marshal(p.ZoneDiscoveryMessage(z))
				if err := validateDiscovery("homeassistant", tp.Discovery, b, ids); err != nil {
					t.Fatal(err)
				}
				if tp.ImageDiscovery != "" {
					b, _ := json.Marshal(p.ImageDiscoveryMessage(z))
					if err := validateDiscovery("homeassistant", tp.ImageDiscovery, b, ids); err != nil {
						t.Fatal(err)
					}
				}
				if tp.EventDiscovery != "" {
					b, _ := json.Marshal(p.EventDiscoveryMessage(z))
					if err := validateDiscovery("homeassistant", tp.EventDiscovery, b, ids); err != nil {
						t.Fatal(err)
					}
				}
			}
			ids = map[string]string{} // the two configurations of a camera are alternatives
		}
	}
	if seen["flycl_front_door"] != "front_door" || seen["flycl_garden"] != "garden" {
		t.Fatalf("node ids %v: names of allowed characters must keep theirs", seen)
	}
}
