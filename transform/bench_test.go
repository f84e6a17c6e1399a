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
// (typically 500×375), on all cores, and reports images/s.
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
		b.Run(name, func(b *testing.B) {
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				var buf []float32
				i := 0
				for pb.Next() {
					img, err := imageio.Decode(data[i%len(data)])
					if err != nil {
						b.Error(err)
						return
					}
					buf = p.Tensor(img, buf)
					i++
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "images/s")
		})
	}
}
