// Package frigate labels Frigate's tracked objects with a flycl model.
//
// Frigate (an NVR with object detection) publishes every tracked object
// on MQTT under <prefix>/events as a JSON message with "type" (new,
// update, end) and the object "before" and "after" the change
// (frigate/track/object_processing.py; the object as
// frigate/track/tracked_object.py to_dict writes it). A Labeller
// subscribes to that topic (Listen), keeps the objects of the configured
// labels and cameras whose box is large enough to classify, and tries
// each new snapshot of an object: it fetches the object's best picture
// from Frigate's HTTP API (GET /api/events/{id}/snapshot.jpg, served
// from memory while the object is tracked, so snapshots need not be
// enabled), cropped, without the box, label and timestamp Frigate draws
// by default, and classifies it. Several workers fetch at once, each
// request under an overall deadline, and one camera holds at most half
// of them, so that a slow camera blocks no other; redirects off
// Frigate's host and port are refused.
//
// An object is decided by its tries as Frigate's own classifier decides
// (Rule: at least 3 tries, at least 60% naming one class, at most 16
// tries), a rejected try counting as a vote for none. The decided class
// is set as the object's sub-label once
// (POST /api/events/{id}/sub_label with {"subLabel", "subLabelScore"}),
// and never over a sub-label another source set (face recognition,
// licence plates, Frigate's classifiers) unless Config.Overwrite. On
// Frigate's authenticated port a Labeller logs in (Login, POST
// /api/login) and sends the token. A Keeper keeps the unsure crops in a
// labelling inbox (package inbox).
//
// ParseMessage reads one event message (outside bytes: it refuses what
// does not have the documented shape with an error naming the field).
package frigate
