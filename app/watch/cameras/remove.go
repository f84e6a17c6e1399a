package cameras

import (
	"errors"
	"time"

	"github.com/flycl/flycl/app/watch/mqtt"
)

// RemoveMQTT retires the camera from the broker: every retained topic of
// it (PREFIX/CAMERA/…) and every Home Assistant discovery config of its
// node is emptied, so that Home Assistant deletes its entities
// (mqtt.Publisher.Remove). It needs MQTT.Broker, and returns the topics
// emptied. The errors of a field are *FieldError.
func (s *Single) RemoveMQTT(wait time.Duration) ([]string, error) {
	if s.MQTT.Broker == "" {
		return nil, failed("MQTT.Broker", "", errors.New("needed to remove a camera from the broker"))
	}
	mo, err := s.MQTT.options()
	if err != nil {
		return nil, err
	}
	mo.Camera = s.Camera
	mo.Discovery = true // the configs are looked for even when the camera no longer announces them
	p, err := mqtt.New(*mo)
	if err != nil {
		return nil, failed("MQTT.Broker", s.MQTT.Broker, err)
	}
	return p.Remove(wait)
}
