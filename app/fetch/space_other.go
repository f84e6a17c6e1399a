//go:build !unix

package fetch

import "errors"

// FreeSpace is not measured on this system: the download goes ahead and a
// full disk shows as a write error.
func FreeSpace(dir string) (uint64, error) {
	return 0, errors.ErrUnsupported
}
