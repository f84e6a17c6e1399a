// Package mqttlimit bounds the MQTT packets a client receives before they
// are held. MQTT 3.1.1, which paho.mqtt.golang speaks, has no maximum
// packet size a client can announce, and paho reads a packet whole into
// memory: a broker (or anyone who can publish to a subscribed topic) can
// make it hold a 250 MB message. Conn wraps the client's connection and
// parses each incoming packet's fixed header: a packet within the limit
// passes unchanged; a PUBLISH over it passes with its payload emptied
// (the topic and packet id kept, so the client still acknowledges it and
// the broker does not send it again), its payload bytes read and dropped
// as they arrive, never held; any other packet over the limit ends the
// connection (ErrTooLarge). Open is a paho OpenConnectionFunc that dials
// as paho does (tcp, or TLS with the client's configuration) and wraps the
// connection.
package mqttlimit
