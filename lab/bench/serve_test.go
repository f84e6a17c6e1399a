package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestServeRefusesBadOptions: options that cannot make the measurement
// are refused before any backbone or server work (the backbone is nil
// here, so reaching that work would panic).
func TestServeRefusesBadOptions(t *testing.T) {
	forty := make([]string, 40)
	for _, c := range []struct {
		name string
		o    ServeOptions
		want string
	}{
		{"no clients", ServeOptions{Images: forty}, "clients"},
		{"a client count of 0", ServeOptions{Images: forty, Clients: []int{4, 0}}, "clients"},
		{"too few images", ServeOptions{Images: forty[:39], Clients: []int{1}}, "40 JPEG"},
	} {
		var out bytes.Buffer
		err := Serve(context.Background(), &out, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || out.Len() != 0 {
			t.Errorf("%s: %v (printed %q), want an error naming %q and nothing printed", c.name, err, out.String(), c.want)
		}
	}
}
