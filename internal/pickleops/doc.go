// Package pickleops checks the framing of Python pickles before a pickle
// library reads them: github.com/nlpodyssey/gopickle allocates whatever a
// length argument claims (a string, a byte string, a frame) before reading
// it, so a few bytes can ask for exabytes. Len walks the opcodes and
// checks every such length against the bytes that are really there.
package pickleops
