package transform

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flycl/flycl/imageio"
)

// BenchmarkDecodePreprocess measures JPEG decode + a preset (resize, crop,
// normalise) on real photos from ../../shared/data/imagenet-sample-500
// (typically 500×375), on all cores, and reports images/s; the
// -reference variants run the unfused path (Resize, CenterCrop, ToTensor)
// that the Preprocessor must equal, for the speed-up side by side.
func BenchmarkDecodePreprocess(b *testing.B) {
	files, _ := filepath.Glob("../../shared/data/imagenet-sample-500/*.JPEG")
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
// 32×32 → 256×256 bilinear, crop 224, normalise) of CIFAR-10-sized JPEGs
// from the subset scripts/int8-cifar10 unpacks (out/cifar10-sub-200-100),
// on one goroutine: the per-image CPU cost of extracting CIFAR-10.
func BenchmarkCIFARPreprocess(b *testing.B) {
	files, _ := filepath.Glob("../out/cifar10-sub-*/test/*/00[0-3]*.jpg")
	if len(files) == 0 {
		b.Skip("no CIFAR-10 subset in ../out (run scripts/int8-cifar10)")
	}
	var data [][]byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
	}
	p := Presets["imagenet"]
	var buf []float32
	b.Run("decode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := imageio.Decode(data[i%len(data)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	img, err := imageio.Decode(data[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Run("reference", func(b *testing.B) { // unfused: Resize, CenterCrop, ToTensor
		for i := 0; i < b.N; i++ {
			buf = ToTensor(p.Apply(img), p.Mean, p.Std, buf)
		}
	})
	b.Run("tensor", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = p.Tensor(img, buf)
		}
	})
	q := p.NewPreprocessor()
	b.Run("preprocessor", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = q.Tensor(img, buf)
		}
	})
	b.Run("decode+preprocessor", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			img, err := imageio.Decode(data[i%len(data)])
			if err != nil {
				b.Fatal(err)
			}
			buf = q.Tensor(img, buf)
		}
	})
}
