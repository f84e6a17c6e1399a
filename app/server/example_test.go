package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/app/server/api"
)

// A server over a new model file that learns from feature vectors: teach
// two classes, then classify a vector.
func Example() {
	dir, _ := os.MkdirTemp("", "flycl-example")
	defer os.RemoveAll(dir)
	backend, err := server.OpenFile(filepath.Join(dir, "cam.flycl"), func() (*flycl.Model, error) {
		return flycl.New(flycl.Config{M: 200, P: 2, K: 50, Lambdas: []float64{0.1, 1, 10}}, 4)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := server.New(server.Config{Backend: backend}) // no Extractor: feature vectors only
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	c := api.NewClient(hs.URL, "") // the server has no token
	ctx := context.Background()
	learned, err := c.Learn(ctx, api.Request{
		Features: [][]float32{{1, 0, 0, 0}, {0.9, 0.1, 0, 0}, {0, 0, 1, 0}, {0, 0.1, 0.9, 0}},
		Labels:   []string{"forklift", "forklift", "pallet", "pallet"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", learned.Version, "new classes", learned.NewClasses)

	pred, err := c.Predict(ctx, api.Request{Features: [][]float32{{0.95, 0.05, 0, 0}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("predicted", pred.Predictions[0].Class)
	// Output:
	// version 1 new classes [forklift pallet]
	// predicted forklift
}
