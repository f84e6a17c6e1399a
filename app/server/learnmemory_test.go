package server

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// TestLearnMemoryLimit: a learn whose task needs more memory than
// Config.MaxLearnBytes (the bound flycl.Model.LearnBytes gives, computed
// here on a fresh model of the server's configuration) is refused with 413
// naming the limit, and changes nothing; the same rows at a limit equal to
// their bound are learned; learned online in batches the bound is one
// batch's, so a task over the limit as one piece passes in pieces.
func TestLearnMemoryLimit(t *testing.T) {
	const n = 400 // each its own class: the n·classes term rules
	fresh, err := flycl.New(testConfig(), testDim)
	if err != nil {
		t.Fatal(err)
	}
	need := fresh.LearnBytes(n, n)
	r := rand.New(rand.NewPCG(4, 2))
	x := make([][]float32, n)
	names := make([]string, n)
	for i := range x {
		x[i] = make([]float32, testDim)
		for j := range x[i] {
			x[i][j] = float32(r.NormFloat64())
		}
		names[i] = fmt.Sprintf("c%d", i)
	}
	for _, c := range []struct {
		name   string
		limit  int64
		online bool
		batch  int
		code   int
	}{
		{"one byte under the bound", need - 1, false, 0, http.StatusRequestEntityTooLarge},
		{"at the bound", need, false, 0, http.StatusOK},
		{"online in batches under the limit", need - 1, true, n / 4, http.StatusOK},
		{"online in one batch over it", need - 1, true, n, http.StatusRequestEntityTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, hs, _ := testServer(t, func(cfg *Config) { cfg.MaxLearnBytes = c.limit })
			code, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json",
				jsonBody(t, Request{Features: x, Labels: names, Online: c.online, Batch: c.batch}), "", nil)
			if code != c.code {
				t.Fatalf("learn: %d %s, want %d", code, b, c.code)
			}
			v := s.View()
			if code != http.StatusOK {
				if msg := string(b); !strings.Contains(msg, fmt.Sprintf("the limit is %d bytes", c.limit)) || !strings.Contains(msg, "--max-learn-bytes") {
					t.Errorf("body %s does not name the limit", b)
				}
				if v.Version() != 0 || len(v.Classes()) != 0 {
					t.Errorf("a refused learn changed the model: version %d, %d classes", v.Version(), len(v.Classes()))
				}
				return
			}
			if len(v.Classes()) != n {
				t.Errorf("%d classes after the learn, want %d", len(v.Classes()), n)
			}
		})
	}
}
