package deploy

import (
	"os"
	"strings"
)

func cutSpec(spec string) (kind, path string, ok bool) { return strings.Cut(spec, ":") }

func statDir(p string) (bool, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}
