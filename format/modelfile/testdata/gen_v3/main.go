// gen_v3 wrote v3.flycl and v1.stats (and v3_contents.txt,
// v1_stats_contents.txt: the SHA-256 of what they hold, as the writing
// code had it in memory) with the code of commit ab359bf, the last that
// wrote model format 3 and statistics format 1, where W's fingerprint was
// a CRC-32C (w_crc32c): "go run ./modelfile/testdata/gen_v3
// modelfile/testdata" in a checkout of that commit. Kept as the record of
// how the files were made; later code writes other formats.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
)

func f32(h []byte, v []float32) []byte {
	for _, x := range v {
		h = binary.LittleEndian.AppendUint32(h, math.Float32bits(x))
	}
	return h
}

func f64(h []byte, v []float64) []byte {
	for _, x := range v {
		h = binary.LittleEndian.AppendUint64(h, math.Float64bits(x))
	}
	return h
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func main() {
	out := os.Args[1]
	const d, n = 6, 24
	cfg := flycl.Config{M: 40, P: 3, K: 12, Seed: 5, Lambdas: []float64{1, 10}}
	m, err := flycl.New(cfg, d)
	if err != nil {
		panic(err)
	}
	labels, err := m.LabelsFor([]string{"cat", "dog"})
	if err != nil {
		panic(err)
	}
	x := make([]float32, n*d)
	y := make([]int, n)
	r := uint64(12345)
	for i := range n {
		y[i] = labels[i%2]
		for j := range d {
			r = r*6364136223846793005 + 1442695040888963407
			v := float32(int64(r>>40)%1000)/250 - 2
			if j == i%2 {
				v += 3
			}
			x[i*d+j] = v
		}
	}
	if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
		panic(err)
	}
	pipe := &modelfile.Pipeline{Backbone: "squeezenet", Name: "squeezenet1.1", WeightsHash: "abc", Output: "features", Dim: d,
		Transform: modelfile.Transform{Preset: "imagenet", Resize: 256, Filter: "bilinear", Crop: 224, Mean: [3]float32{0.4, 0.4, 0.4}, Std: [3]float32{0.2, 0.2, 0.2}}}
	s := m.Snapshot()
	if err := modelfile.Save(filepath.Join(out, "v3.flycl"), &modelfile.File{Snapshot: s, Pipeline: pipe}); err != nil {
		panic(err)
	}
	var b []byte
	for i := range cfg.M {
		b = f32(b, codec.LowerRow(s, i))
	}
	var lines []string
	lines = append(lines, "# written by genC with the format-3 code: SHA-256 of G (lower rows), S and C as float32 bits, little-endian",
		"G "+sum(b), "S "+sum(f32(nil, s.S())), "C "+sum(f32(nil, s.Coef())),
		fmt.Sprintf("lambda %v", s.State().Lambda), fmt.Sprintf("names %s", strings.Join(s.State().Names, ",")),
		fmt.Sprintf("version %d", s.Version()), fmt.Sprintf("samples %d", s.Samples()))
	os.WriteFile(filepath.Join(out, "v3_contents.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	st, err := m.TaskStats(context.Background(), x, y)
	if err != nil {
		panic(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("golden#%d", i)
	}
	sf, err := modelfile.NewStatsFile(m, pipe, st, []string{"cat", "dog"}, keys, modelfile.Shard{Index: 0, Count: 1, Source: "golden"})
	if err != nil {
		panic(err)
	}
	if err := modelfile.SaveStats(filepath.Join(out, "v1.stats"), sf); err != nil {
		panic(err)
	}
	var ids []byte
	for _, id := range sf.IDs {
		ids = binary.LittleEndian.AppendUint64(ids, id)
	}
	lines = []string{"# written by genC with the statistics-format-1 code: SHA-256 of G (packed lower triangle), S as float64 bits and the sample IDs as uint64, little-endian",
		"G " + sum(f64(nil, st.G)), "S " + sum(f64(nil, st.S)), "IDs " + sum(ids),
		fmt.Sprintf("n %d", st.N), fmt.Sprintf("counts %v", st.Counts), fmt.Sprintf("names %s", strings.Join(sf.Names, ","))}
	os.WriteFile(filepath.Join(out, "v1_stats_contents.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
