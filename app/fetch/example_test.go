package fetch_test

import (
	"fmt"
	"strings"

	"github.com/flycl/flycl/app/fetch"
)

// The flag that reads a catalogue asset once it is fetched into a folder.
func ExampleAsset_Flag() {
	a, _ := fetch.Lookup("resnet50-v2")
	fmt.Println(a.Flag("weights"), a.Digest.Algo, a.TrustOnFirstUse())
	v, _ := fetch.Lookup("vit")
	fmt.Println(v.TrustOnFirstUse())
	// Output:
	// resnet50:weights/resnet50-11ad3fa6.pth sha256 false
	// true
}

// A setting's command line, as flycl-lab reproduce runs it.
func ExampleSetting_Command() {
	s, _ := fetch.LookupSetting("cub-resnet50")
	line, _ := s.Command("weights", "data")
	fmt.Println("flycl-lab " + strings.Join(line, " "))
	// Output:
	// flycl-lab run --data cub:data/CUB_200_2011.tgz --backbone resnet50:weights/resnet50-11ad3fa6.pth --preset flycl-in --tasks 10 --order flycl --seeds 2023,2024,2025,2026,2027 --lambdas 1e4,1e5,1e6,1e7,1e8,1e9 --out out/cub-resnet50
}
