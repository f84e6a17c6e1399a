package zoo_test

import (
	"fmt"
	"io/fs"

	"github.com/flycl/flycl/vision/backbone/zoo"
)

// The shipped weights are a models folder: one sub-folder per backbone,
// with the licence and attribution beside them.
func ExampleFS() {
	entries, _ := fs.ReadDir(zoo.FS(), ".")
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// LICENSE
	// NOTICE
	// mobilenetv2-1.0
	// squeezenet1.1
}
