package mqttlimit

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// ErrTooLarge is a packet over the limit that cannot be shortened (not a
// PUBLISH), or a malformed header.
var ErrTooLarge = errors.New("mqtt packet larger than the limit")

// publish is the MQTT control packet type of PUBLISH.
const publish = 3

// Conn is a net.Conn whose reads give the incoming MQTT packets with
// every PUBLISH payload over Limit emptied (see the package doc).
type Conn struct {
	net.Conn
	limit   int64
	r       *bufio.Reader
	pending []byte // the rewritten header of a dropped PUBLISH, to give
	pass    int64  // bytes of the current packet to give as they are
	skip    int64  // payload bytes of a dropped PUBLISH still to discard
	err     error  // sticky
	dropped atomic.Int64
	onDrop  func(topic string, size int64)
}

// New wraps c: PUBLISH payloads whose packet is over limit bytes
// (remaining length, the bytes after the fixed header) are dropped, each
// reported to onDrop (when not nil) with its topic and size.
func New(c net.Conn, limit int64, onDrop func(topic string, size int64)) *Conn {
	return &Conn{Conn: c, limit: limit, r: bufio.NewReaderSize(c, 4096), onDrop: onDrop}
}

// Dropped returns the number of PUBLISH payloads dropped so far.
func (c *Conn) Dropped() int64 { return c.dropped.Load() }

// Read gives the stream with dropped payloads left out.
func (c *Conn) Read(p []byte) (int, error) {
	for {
		switch {
		case c.err != nil:
			return 0, c.err
		case len(p) == 0:
			return 0, nil
		case len(c.pending) > 0:
			n := copy(p, c.pending)
			c.pending = c.pending[n:]
			return n, nil
		case c.pass > 0:
			n, err := c.r.Read(p[:min(int64(len(p)), c.pass)])
			c.pass -= int64(n)
			return n, err
		case c.skip > 0:
			n, err := c.r.Discard(int(min(c.skip, 1<<20)))
			c.skip -= int64(n)
			if err != nil {
				return 0, unexpected(err)
			}
			continue
		}
		if err := c.next(); err != nil {
			if !errors.Is(err, ErrTooLarge) {
				return 0, err // the connection's own, e.g. a deadline
			}
			c.err = err
			c.Conn.Close()
		}
	}
}

// next reads the fixed header of the next packet and sets up its reading.
func (c *Conn) next() error {
	b0, err := c.r.ReadByte()
	if err != nil {
		return err
	}
	hdr := []byte{b0}
	var rl int64
	for i, shift := 0, 0; ; i, shift = i+1, shift+7 {
		if i == 4 {
			return fmt.Errorf("%w: a remaining length of more than 4 bytes", ErrTooLarge)
		}
		b, err := c.r.ReadByte()
		if err != nil {
			return unexpected(err)
		}
		hdr = append(hdr, b)
		rl |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			break
		}
	}
	if rl <= c.limit {
		c.pending, c.pass = hdr, rl
		return nil
	}
	if b0>>4 != publish {
		return fmt.Errorf("%w: a packet of type %d with %d bytes, the limit is %d", ErrTooLarge, b0>>4, rl, c.limit)
	}
	// the topic (2-byte length, then its bytes) and, at QoS 1 and 2, the
	// packet id: kept; the payload: dropped
	var tl [2]byte
	if _, err := io.ReadFull(c.r, tl[:]); err != nil {
		return err
	}
	keep := 2 + int64(binary.BigEndian.Uint16(tl[:]))
	if (b0>>1)&3 != 0 {
		keep += 2
	}
	if keep > rl {
		return fmt.Errorf("%w: a PUBLISH whose topic is longer than the packet", ErrTooLarge)
	}
	rest := make([]byte, keep-2) // at most 65537 bytes
	if _, err := io.ReadFull(c.r, rest); err != nil {
		return err
	}
	out := append([]byte{b0}, varint(keep)...)
	out = append(append(out, tl[:]...), rest...)
	c.pending, c.skip = out, rl-keep
	c.dropped.Add(1)
	if c.onDrop != nil {
		topicLen := int(binary.BigEndian.Uint16(tl[:]))
		c.onDrop(string(rest[:topicLen]), rl)
	}
	return nil
}

// unexpected is err, io.ErrUnexpectedEOF for the end of the stream
// inside a packet.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// varint is MQTT's remaining-length encoding of n.
func varint(n int64) []byte {
	var b []byte
	for {
		d := byte(n & 0x7f)
		n >>= 7
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}

// Open returns a paho OpenConnectionFunc that dials the broker as paho
// does for tcp:// and ssl:// (mqtt://, tls://, mqtts://) brokers, with the
// client's Dialer, ConnectTimeout and TLSConfig, and wraps the
// connection (New with limit and onDrop).
func Open(limit int64, onDrop func(topic string, size int64)) paho.OpenConnectionFunc {
	return func(u *url.URL, o paho.ClientOptions) (net.Conn, error) {
		d := o.Dialer
		if d == nil {
			d = &net.Dialer{Timeout: 30 * time.Second}
		}
		var c net.Conn
		var err error
		switch u.Scheme {
		case "mqtt", "tcp":
			c, err = d.Dial("tcp", u.Host)
		case "ssl", "tls", "mqtts", "mqtt+ssl", "tcps":
			c, err = tls.DialWithDialer(d, "tcp", u.Host, o.TLSConfig)
		default:
			return nil, fmt.Errorf("mqttlimit: broker %s: scheme %q is not tcp or ssl", u.Redacted(), u.Scheme)
		}
		if err != nil {
			return nil, err
		}
		return New(c, limit, onDrop), nil
	}
}
