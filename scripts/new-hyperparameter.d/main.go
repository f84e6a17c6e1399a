// Command main is the helper of scripts/new-hyperparameter, built inside
// the script's copy of the tree:
//
//	main features OUT.npz   writes 40 labelled 6-dimensional samples of 2 classes
//	main info MODEL         prints the model's configuration as the HTTP API
//	                        gives it (GET /v1/model on a server on 127.0.0.1)
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/format/features"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "new-hyperparameter:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: features OUT.npz | info MODEL")
	}
	switch args[0] {
	case "features":
		r := rand.New(rand.NewPCG(1, 2))
		s := &features.Set{N: 40, D: 6, ClassNames: []string{"a", "b"}}
		for i := range s.N {
			c := i % 2
			s.Labels = append(s.Labels, c)
			for j := range s.D {
				x := float32(r.NormFloat64())
				if j == 3*c {
					x += 4
				}
				s.X = append(s.X, x)
			}
		}
		return features.Save(args[1], s)
	case "info":
		b, err := server.OpenFile(args[1], func() (*flycl.Model, error) { return nil, fmt.Errorf("%s does not exist", args[1]) })
		if err != nil {
			return err
		}
		srv, err := server.New(server.Config{Backend: b})
		if err != nil {
			return err
		}
		hs := httptest.NewServer(srv.Handler())
		defer func() { hs.Close(); srv.Close() }()
		info, err := api.NewClient(hs.URL, "").Model(context.Background())
		if err != nil {
			return err
		}
		fmt.Printf("%s\n", info.Config)
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}
