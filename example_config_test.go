package flycl_test

import (
	"errors"
	"fmt"

	"github.com/flycl/flycl"
)

// A Config's zero fields take their defaults; a field out of range is a
// *FieldError naming it.
func ExampleConfig() {
	cfg := flycl.Config{M: 2000, K: 500}
	full := cfg.WithDefaults()
	fmt.Println("m", full.M, "p", full.P, "k", full.K, "grid", full.Lambdas)

	_, err := flycl.New(flycl.Config{M: 100, P: 8, K: 200}, 16)
	var fe *flycl.FieldError
	fmt.Println(errors.As(err, &fe), fe.Field)
	// Output:
	// m 2000 p 300 k 500 grid [1e+06 1e+07 1e+08 1e+09]
	// true K
}
