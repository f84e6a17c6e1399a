// Package smallfile reads a file that should be small (a password, a
// bearer token, a CA bundle) with a size limit checked before the bytes
// are held: a regular file larger than the limit is refused from its
// size, and anything else (a device such as /dev/zero, a pipe) is read to
// at most the limit and one byte more, so a file that names something
// endless costs the limit in memory and time, not the machine.
package smallfile
