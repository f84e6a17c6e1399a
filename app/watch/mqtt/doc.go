// Package mqtt publishes what flycl watch sees to an MQTT broker, and
// announces it to Home Assistant through its MQTT discovery.
//
// A Publisher is a watch.UpdateSink. For a camera named CAMERA under the
// topic prefix PREFIX it keeps three retained topics, all at QoS 1:
//
//	PREFIX/CAMERA/state         the current answer: a class name or "unknown"
//	PREFIX/CAMERA/attributes    JSON: class, probability, top scores, model version, time
//	PREFIX/CAMERA/availability  "online" while connected, "offline" (the last will)
//
// and, with discovery, HA_PREFIX/sensor/NODE_ID/answer/config: a sensor
// whose state is the answer and whose attributes are the JSON above. With
// Options.Image the frame (zone crop) that confirmed each answer goes to
// PREFIX/CAMERA/image as a JPEG, announced as an image entity
// (HA_PREFIX/image/NODE_ID/crop/config).
//
// The client is github.com/eclipse/paho.mqtt.golang (MQTT 3.1.1): every
// broker and Home Assistant speak 3.1.1, and its automatic reconnection
// with exponential backoff is mature. The state is level-triggered: the
// Publisher keeps only the latest update, publishes it when it arrives and
// again after every (re)connection, so a broker that restarts (losing its
// retained messages or not) ends with the latest answer, never an older
// one, and an update given while the broker was away is published when it
// comes back.
package mqtt
