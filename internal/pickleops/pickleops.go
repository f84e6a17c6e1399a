package pickleops

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Len walks the opcodes of the pickle at the start of b, checking
// each length argument against the bytes left, and returns the pickle's
// length (through STOP). Opcode argument formats are those of Python's
// pickletools.
func Len(b []byte) (int, error) {
	i := 0
	need := func(n uint64) error {
		if n > uint64(len(b)-i) {
			return fmt.Errorf("pickle opcode at byte %d claims %d bytes, %d left", i, n, len(b)-i)
		}
		return nil
	}
	line := func() error {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return fmt.Errorf("pickle: unterminated line at byte %d", i)
		}
		i += j + 1
		return nil
	}
	for i < len(b) {
		op := b[i]
		i++
		switch op {
		case '.': // STOP
			return i, nil
		case '(', '0', '1', '2', 'N', 0x88, 0x89, ']', 'a', 'e', 'l', ')', 't', 0x85, 0x86, 0x87,
			'}', 'd', 's', 'u', 0x8f, 0x90, 0x91, 'R', 'b', 'o', 0x81, 0x92, 0x93, 0x94, 'Q', 0x97, 0x98:
		case 'K', 'h', 'q', 0x82, 0x80:
			if err := need(1); err != nil {
				return 0, err
			}
			i++
		case 'M', 0x83:
			if err := need(2); err != nil {
				return 0, err
			}
			i += 2
		case 'J', 'j', 'r', 0x84:
			if err := need(4); err != nil {
				return 0, err
			}
			i += 4
		case 'G':
			if err := need(8); err != nil {
				return 0, err
			}
			i += 8
		case 0x95: // FRAME: an 8-byte length, then the framed opcodes
			if err := need(8); err != nil {
				return 0, err
			}
			n := binary.LittleEndian.Uint64(b[i:])
			i += 8
			if err := need(n); err != nil {
				return 0, err
			}
		case 'I', 'L', 'S', 'V', 'F', 'g', 'p', 'P':
			if err := line(); err != nil {
				return 0, err
			}
		case 'c', 'i':
			for k := 0; k < 2; k++ {
				if err := line(); err != nil {
					return 0, err
				}
			}
		case 'U', 'C', 0x8c, 0x8a:
			if err := need(1); err != nil {
				return 0, err
			}
			n := uint64(b[i])
			i++
			if err := need(n); err != nil {
				return 0, err
			}
			i += int(n)
		case 'T', 'B', 'X', 0x8b:
			if err := need(4); err != nil {
				return 0, err
			}
			n := uint64(binary.LittleEndian.Uint32(b[i:]))
			i += 4
			if err := need(n); err != nil {
				return 0, err
			}
			i += int(n)
		case 0x8d, 0x8e, 0x96:
			if err := need(8); err != nil {
				return 0, err
			}
			n := binary.LittleEndian.Uint64(b[i:])
			i += 8
			if err := need(n); err != nil {
				return 0, err
			}
			i += int(n)
		default:
			return 0, fmt.Errorf("pickle: unknown opcode 0x%02x at byte %d", op, i-1)
		}
	}
	return 0, fmt.Errorf("pickle: no STOP opcode (truncated?)")
}
