package extract_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// An Extractor of the built-in SqueezeNet: the features of a folder of
// images (not cached: CacheDir is empty; a cache needs the data's key,
// dataset.Spec.Key), then of one decoded image, as a server extracts a
// request's. (Compiled, not run: it needs ONNX Runtime.)
func ExampleExtractor() {
	if err := backbone.Init(os.Getenv("FLYCL_ORT_LIB")); err != nil {
		log.Fatal(err)
	}
	bb, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	if err != nil {
		log.Fatal(err)
	}
	e, err := extract.NewExtractor(bb, "squeezenet", "features", nil) // the backbone's own preset
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	ds, err := dataset.OpenFolder("photos") // photos/<class>/<image>
	if err != nil {
		log.Fatal(err)
	}
	set, cached, err := e.Dataset(context.Background(), ds, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(set.N, set.D, cached)
	img, err := imageio.Decoder{}.DecodeFile("query.jpg")
	if err != nil {
		log.Fatal(err)
	}
	x, err := e.Features(context.Background(), []*imageio.RGB{img})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(x) == e.Dim(), e.Pipeline().Text() != "")
}
