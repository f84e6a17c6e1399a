package mqttlimit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
)

// packet encodes an MQTT packet by hand: the first byte, the remaining
// length (MQTT's 7-bit groups, least significant first) and the body.
func packet(b0 byte, body []byte) []byte {
	var rl []byte
	n := len(body)
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 128
		}
		rl = append(rl, d)
		if n == 0 {
			break
		}
	}
	return append(append([]byte{b0}, rl...), body...)
}

// publishPacket is a PUBLISH at qos (packet id id when qos > 0).
func publishPacket(qos byte, topic string, id uint16, payload []byte) []byte {
	var body []byte
	body = binary.BigEndian.AppendUint16(body, uint16(len(topic)))
	body = append(body, topic...)
	if qos > 0 {
		body = binary.BigEndian.AppendUint16(body, id)
	}
	return packet(0x30|qos<<1, append(body, payload...))
}

// streamConn is a net.Conn reading from r.
type streamConn struct {
	net.Conn // nil: only Read and Close are used
	r        io.Reader
}

func (s *streamConn) Read(p []byte) (int, error) { return s.r.Read(p) }
func (s *streamConn) Close() error               { return nil }

// TestConnRewrites: packets within the limit pass byte for byte; a
// PUBLISH over it (QoS 0, 1 and 2) passes with the same topic and packet
// id and no payload, reported to onDrop; the packets after it are intact.
func TestConnRewrites(t *testing.T) {
	const limit = 100
	big := bytes.Repeat([]byte{'x'}, 300_000) // a 3-byte remaining length
	var in, want bytes.Buffer
	add := func(got, expect []byte) { in.Write(got); want.Write(expect) }
	small := publishPacket(1, "frigate/events", 7, []byte(`{"type":"new"}`))
	add(small, small)
	add(publishPacket(1, "frigate/events", 8, big), publishPacket(1, "frigate/events", 8, nil))
	add(publishPacket(0, "a/b", 0, big[:limit]), publishPacket(0, "a/b", 0, nil)) // 2+3+100 > limit
	add(publishPacket(2, "q2", 9, big[:1000]), publishPacket(2, "q2", 9, nil))
	atLimit := publishPacket(0, "t", 0, big[:limit-3]) // remaining length exactly limit
	add(atLimit, atLimit)
	ping := packet(0xd0, nil) // PINGRESP
	add(ping, ping)
	var drops []string
	c := New(&streamConn{r: &in}, limit, func(topic string, size int64) { drops = append(drops, topic) })
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("stream differs: got %d bytes, want %d", len(got), want.Len())
	}
	if c.Dropped() != 3 || len(drops) != 3 || drops[0] != "frigate/events" || drops[1] != "a/b" || drops[2] != "q2" {
		t.Fatalf("dropped %d: %q", c.Dropped(), drops)
	}
}

// TestConnRefuses: a packet over the limit that is not a PUBLISH, a
// remaining length of 5 bytes and a PUBLISH whose topic runs past its
// packet end the connection with ErrTooLarge.
func TestConnRefuses(t *testing.T) {
	for name, in := range map[string][]byte{
		"large SUBACK":            packet(0x90, make([]byte, 200)),
		"5-byte length":           {0x30, 0xff, 0xff, 0xff, 0xff, 0x01},
		"topic beyond the packet": append([]byte{0x30, 0xc8, 0x01, 0xff, 0xff}, make([]byte, 200)...),
	} {
		t.Run(name, func(t *testing.T) {
			c := New(&streamConn{r: bytes.NewReader(in)}, 100, nil)
			if _, err := io.ReadAll(c); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			if _, err := c.Read(make([]byte, 1)); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("the error does not stay: %v", err)
			}
		})
	}
}

// zeros is an endless reader of zero bytes that counts them.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestConnHoldsNoPayload: a 64 MiB payload over the limit is read and
// dropped with the bytes allocated (the runtime's count) under 1 MiB:
// the payload is discarded as it arrives, never held.
func TestConnHoldsNoPayload(t *testing.T) {
	const size = 64 << 20
	hdr := publishPacket(1, "frigate/events", 1, nil)
	// the same header with the payload's length: topic (2+14) + id (2)
	head := packet(0x32, nil)[:1]
	var body []byte
	n := size + 18
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 128
		}
		body = append(body, d)
		if n == 0 {
			break
		}
	}
	head = append(append(head, body...), hdr[2:]...)
	z := &zeros{}
	r := io.MultiReader(bytes.NewReader(head), io.LimitReader(z, size), bytes.NewReader(packet(0xd0, nil)))
	c := New(&streamConn{r: r}, 1<<20, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := io.ReadAll(c)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(hdr, packet(0xd0, nil)...); !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	if z.n < size {
		t.Fatalf("only %d payload bytes were read", z.n)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
		t.Errorf("dropping a %d-byte payload allocated %d bytes", size, a)
	}
}

// FuzzConn: any incoming bytes, at any limit, give an error or a stream
// no longer than the input (a dropped payload's header is never longer
// than the original), and never a panic; at a limit no packet reaches the
// stream is the input itself.
func FuzzConn(f *testing.F) {
	f.Add(publishPacket(1, "frigate/events", 8, bytes.Repeat([]byte{'x'}, 300)), uint16(100))
	f.Add(append(publishPacket(0, "a", 0, []byte("hi")), packet(0xd0, nil)...), uint16(1))
	f.Add([]byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, uint16(10))
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		c := New(&streamConn{r: bytes.NewReader(in)}, int64(limit), nil)
		got, err := io.ReadAll(c)
		if err == nil && len(got) > len(in) {
			t.Fatalf("%d bytes out of %d in", len(got), len(in))
		}
		c = New(&streamConn{r: bytes.NewReader(in)}, 1<<28, nil) // larger than any remaining length
		got, err = io.ReadAll(c)
		if err == nil && !bytes.Equal(got, in) {
			t.Fatalf("with no packet over the limit the stream changed")
		}
	})
}
