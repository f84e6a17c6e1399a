package watch_test

import (
	"fmt"
	"strings"

	"github.com/flycl/flycl/app/watch"
)

// A new answer becomes an event when it holds for n frames: the one-frame
// "dog" is a flicker.
func ExampleDebouncer() {
	d := watch.NewDebouncer(2)
	for i, a := range []string{"cat", "cat", "dog", "cat", "dog", "dog"} {
		if c, ok := d.Observe(i, a); ok {
			fmt.Printf("frame %d: %q -> %q (since frame %d)\n", c.Frame, c.From, c.To, c.Since)
		}
	}
	// Output:
	// frame 1: "" -> "cat" (since frame 0)
	// frame 5: "cat" -> "dog" (since frame 4)
}

// Frames as ffmpeg writes them with -f image2pipe -c:v ppm.
func ExampleReader() {
	stream := "P6\n2 1\n255\n\xff\x00\x00\x00\x00\xff" + "P6\n1 1\n255\n\x00\xff\x00"
	r := watch.NewReader(strings.NewReader(stream), 0)
	for {
		img, err := r.Next(nil)
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(img.W, img.H, img.Pix)
	}
	// Output:
	// 2 1 [255 0 0 0 0 255]
	// 1 1 [0 255 0]
	// EOF
}
