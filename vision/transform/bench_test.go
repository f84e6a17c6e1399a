package transform

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

// BenchmarkDecodePreprocess measures JPEG decode + a preset (resize, crop,
// normalise) on real photos from ../../shared/data/imagenet-sample-500
// (typically 500×375), on all cores, and reports images/s; the
// -reference variants run the unfused path (Resize, CenterCrop, ToTensor)
// that the Preprocessor must equal, for the speed-up side by side.
func BenchmarkDecodePreprocess(b *testing.B) {
	files, _ := filepath.Glob("../../../shared/data/imagenet-sample-500/*.JPEG")
	if len(files) == 0 {
		b.Skip("shared ImageNet sample not available")
	}
	files = files[:min(64, len(files))]
	var data [][]byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
	}
	for _, name := range []string{"timm-vit", "tv-resnet50-v2", "flycl"} {
		p := Presets[name]
		for _, ref := range []bool{false, true} {
			sub := name
			if ref {
				sub += "-reference" // unfused: Resize, CenterCrop, ToTensor
			}
			b.Run(sub, func(b *testing.B) {
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					var buf []float32
					q := p.NewPreprocessor()
					i := 0
					for pb.Next() {
						img, err := imageio.Decode(data[i%len(data)])
						if err != nil {
							b.Error(err)
							return
						}
						if ref {
							buf = ToTensor(p.Apply(img), p.Mean, p.Std, buf)
						} else {
							buf = q.Tensor(img, buf)
						}
						i++
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "images/s")
			})
		}
	}
}

// BenchmarkCIFARPreprocess measures decode + the imagenet preset (resize
// 32×32 → 256×256 bilinear, crop 224, normalise) of CIFAR-10's JPEGs (the
// first 256 in ../../shared/data/cifar10-jpeg.tar.gz), on one goroutine:
// the per-image CPU cost of extracting CIFAR-10. "reference" is the
// unfused path (Resize, CenterCrop, ToTensor), "preprocessor" the one
// extraction uses, side by side.
func BenchmarkCIFARPreprocess(b *testing.B) {
	data := cifarJPEGs(b, "../../../shared/data/cifar10-jpeg.tar.gz", 256)
	p := Presets["imagenet"]
	q := p.NewPreprocessor()
	var buf []float32
	for _, c := range []struct {
		name string
		pre  func(*imageio.RGB)
	}{
		{"decode", func(*imageio.RGB) {}},
		{"decode+reference", func(img *imageio.RGB) { buf = ToTensor(p.Apply(img), p.Mean, p.Std, buf) }},
		{"decode+preprocessor", func(img *imageio.RGB) { buf = q.Tensor(img, buf) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				img, err := imageio.Decode(data[i%len(data)])
				if err != nil {
					b.Fatal(err)
				}
				c.pre(img)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "images/s")
		})
	}
}

// cifarJPEGs reads the first n .jpg files of a tar.gz (skipping the
// benchmark when it is absent).
func cifarJPEGs(b *testing.B, path string, n int) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		b.Skip("CIFAR-10 JPEG archive not available: ", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	tr := tar.NewReader(z)
	var data [][]byte
	for len(data) < n {
		h, err := tr.Next()
		if err != nil {
			b.Fatalf("%s: %v after %d images", path, err, len(data))
		}
		if !strings.HasSuffix(h.Name, ".jpg") {
			continue
		}
		d, err := io.ReadAll(tr)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
	}
	return data
}
