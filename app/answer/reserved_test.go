package answer

import (
	"testing"

	"github.com/flycl/flycl/reject"
)

// TestIsReserved: background and none, in any case, and nothing else.
func TestIsReserved(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{{"background", true}, {"Background", true}, {"none", true}, {"NONE", true}, {"nonesuch", false}, {"cat", false}, {"", false}} {
		if IsReserved(c.name) != c.want {
			t.Errorf("IsReserved(%q) = %v", c.name, !c.want)
		}
	}
}

// TestDecideReserved: with rejection off (nothing rejected by score), a
// reserved top class is still answered UnknownAnswer, and any other class
// is the answer.
func TestDecideReserved(t *testing.T) {
	row := []float32{0.9, 0.1}
	for top, want := range map[string]string{"none": UnknownAnswer, "Background": UnknownAnswer, "cat": "cat"} {
		if p := Decide(top, reject.Rule{}, row, 1); p.Answer != want || p.Unknown != (want == UnknownAnswer) {
			t.Errorf("Decide(%q): answer %q, unknown %v; want %q", top, p.Answer, p.Unknown, want)
		}
	}
}
