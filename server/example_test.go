package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/server"
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

	post := func(path string, req server.Request, out any) {
		b, _ := json.Marshal(req)
		resp, err := http.Post(hs.URL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(out)
	}
	var learned server.LearnResponse
	post("/v1/learn", server.Request{
		Features: [][]float32{{1, 0, 0, 0}, {0.9, 0.1, 0, 0}, {0, 0, 1, 0}, {0, 0.1, 0.9, 0}},
		Labels:   []string{"forklift", "forklift", "pallet", "pallet"},
	}, &learned)
	fmt.Println("version", learned.Version, "new classes", learned.NewClasses)

	var pred server.PredictResponse
	post("/v1/predict", server.Request{Features: [][]float32{{0.95, 0.05, 0, 0}}}, &pred)
	fmt.Println("predicted", pred.Predictions[0].Class)
	// Output:
	// version 1 new classes [forklift pallet]
	// predicted forklift
}
