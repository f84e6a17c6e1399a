// Package frigate labels Frigate's tracked objects with a flycl model.
//
// Frigate (an NVR with object detection) publishes every tracked object
// on MQTT under <prefix>/events as a JSON message with "type" (new,
// update, end) and the object "before" and "after" the change (see
// https://docs.frigate.video/integrations/mqtt/). A Labeller subscribes
// to that topic, keeps the new and updated objects of the configured
// labels and cameras whose box is large enough to classify, fetches the
// object's snapshot crop from Frigate's HTTP API
// (GET /api/events/{id}/snapshot.jpg?crop=1), classifies it and sets the
// answer as the object's sub-label
// (POST /api/events/{id}/sub_label with {"subLabel", "subLabelScore"},
// https://docs.frigate.video/integrations/api). It classifies an object
// again only when Frigate reports a new snapshot, never posts the same
// sub-label twice for one object and never posts "unknown".
//
// ParseMessage reads one event message (outside bytes: it refuses what
// does not have the documented shape with an error naming the field).
package frigate
