package inbox_test

import (
	"fmt"
	"os"

	"github.com/flycl/flycl/app/inbox"
)

// An inbox keeps what a model was unsure of, bounded, and finds it again
// after a restart.
func Example() {
	dir, _ := os.MkdirTemp("", "inbox")
	defer os.RemoveAll(dir)
	b, err := inbox.Open(dir, inbox.Options{MaxItems: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	row := []float32{0.41, 0.38} // the class scores of a prediction
	if why, ok := (inbox.Policy{}).Keep(false, 0, false, row); ok {
		for _, guess := range []string{"cat", "dog", "fox"} { // three such predictions
			b.Add(inbox.Entry{Guess: guess, Why: why, Features: []float32{1, 2, 3}})
		}
	}
	b.Close()

	b, _ = inbox.Open(dir, inbox.Options{MaxItems: 2})
	defer b.Close()
	for _, it := range b.List() {
		fmt.Println(it.Guess, it.Why)
	}
	// Output:
	// fox low-margin
	// dog low-margin
}
