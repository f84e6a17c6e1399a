// Package atomicfile writes files so that readers see either the old
// content or the complete new content, never a partial file: data goes to
// a temporary file in the same directory, which is synced and then renamed
// over the target, and the directory is synced.
//
// The target must be a regular file or not exist: a directory, device
// node, FIFO or socket at the path is refused. A symbolic link is
// followed: the file it points to is replaced (in its own directory) and
// the link stays. A replaced file keeps its permission bits; a new file
// gets 0666 less the process umask, as os.Create would give it (owner and
// group are those of the writing process).
//
// Temporary files are named ".NAME.tmp-DIGITS" and hold an advisory lock
// (flock) while they are written. A writer killed mid-write leaves its
// temporary behind; the next Create for the same target removes every
// such temporary that no live writer holds locked, and nothing else.
package atomicfile
