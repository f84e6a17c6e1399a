// Command releasecmp is the checking half of scripts/release-test: it
// makes the test's images, and compares what the linux/arm64 release
// binary (run under qemu) computed with what the linux/amd64 one did,
// with tolerances derived from float32 arithmetic.
//
//	releasecmp images SRC DST CLASSES PER
//	releasecmp check MODEL TRAIN.npz FEAT_A.npz FEAT_B.npz PF_A.json PF_B.json PI_A.json PI_B.json
//
// images fills DST/c0 ... DST/c(CLASSES-1) with PER images each: the
// first CLASSES·PER photos of the folder SRC in name order when SRC
// exists, else generated PPM images (a colour and a pattern per class,
// with noise).
//
// check reads the amd64 model MODEL (learned from TRAIN.npz), the
// features the two binaries extracted from the same photos (FEAT_A by
// amd64, FEAT_B by arm64), and the two binaries' predictions (--format
// json) on TRAIN.npz (PF_*) and on the photos through the backbone
// (PI_*), each binary with the model it learned itself. It fails unless
// every input has the same top-1 class and every score agrees within
//
//	tol_ij = 2·κ·(3m+1+n)·u·‖h_i‖·‖c_j‖        the two ridge solutions
//	       + 2·k·u·(|h_i|·|c_j|)                the two score dot products
//	       + 2·p·u·‖|W||x_i|‖·‖c_j‖             the two projections W·x
//	       + ‖h_i^amd64 − h_i^arm64‖·‖c_j‖      different backbone features (photos)
//
// with u = 2⁻²⁴, m the expansion, k its non-zeros, p W's non-zeros per
// row, n the training samples, h_i the expanded input, c_j class j's
// coefficients and κ ≤ (trace G + λ)/λ the condition number of the ridge
// system G + λI (G = HᵀH). The first term is the forward error of a
// Cholesky solve (backward error γ_{3m+1}, Higham Thm 10.4) plus the Gram
// accumulation's (γ_n), amplified by κ, for each build. The backbone
// features themselves (ONNX Runtime's x64 and arm64 kernels) are
// compared first: ‖f_amd64 − f_arm64‖ ≤ L·K·u·‖f‖, the first-order bound
// of L layers of inner products of at most K terms (SqueezeNet 1.1: 26
// convolutions, fan-in at most 3·3·64 = 576; MobileNetV2: 52, 960).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flycl/flycl/internal/codec"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
)

const u = 1.0 / (1 << 24)

func main() {
	if len(os.Args) < 2 {
		fail("usage: releasecmp images|check ...")
	}
	var err error
	switch os.Args[1] {
	case "images":
		err = images(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "releasecmp:", msg)
	os.Exit(1)
}

func images(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("images SRC DST CLASSES PER")
	}
	src, dst := args[0], args[1]
	var classes, per int
	if _, err := fmt.Sscan(args[2], &classes); err != nil {
		return err
	}
	if _, err := fmt.Sscan(args[3], &per); err != nil {
		return err
	}
	var photos []string
	if ents, err := os.ReadDir(src); err == nil {
		for _, e := range ents {
			ext := strings.ToLower(filepath.Ext(e.Name()))
			if !e.IsDir() && (ext == ".jpeg" || ext == ".jpg" || ext == ".png") {
				photos = append(photos, filepath.Join(src, e.Name()))
			}
		}
		slices.Sort(photos)
	}
	generated := len(photos) < classes*per
	for c := 0; c < classes; c++ {
		dir := filepath.Join(dst, fmt.Sprintf("c%d", c))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for i := 0; i < per; i++ {
			if !generated {
				p := photos[c*per+i]
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644); err != nil {
					return err
				}
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("g%d.ppm", i)), ppm(c, i), 0o644); err != nil {
				return err
			}
		}
	}
	if generated {
		fmt.Printf("releasecmp: %s has fewer than %d photos: generated %d×%d PPM images\n", src, classes*per, classes, per)
	}
	return nil
}

// ppm draws image i of class c: class c's colour, stripes whose period
// depends on c, and noise, 128×128.
func ppm(c, i int) []byte {
	const s = 128
	r := rand.New(rand.NewPCG(uint64(c), uint64(i)))
	base := [3]float64{float64(60 + 80*(c%3)), float64(60 + 70*((c+1)%3)), float64(200 - 60*(c%3))}
	b := []byte(fmt.Sprintf("P6\n%d %d\n255\n", s, s))
	for y := 0; y < s; y++ {
		for x := 0; x < s; x++ {
			stripe := 50 * math.Sin(float64(x+y*c)*math.Pi/float64(4+4*c))
			for ch := 0; ch < 3; ch++ {
				v := base[ch] + stripe + 25*r.NormFloat64()
				b = append(b, byte(max(0, min(255, v))))
			}
		}
	}
	return b
}

type ranked struct {
	Label int     `json:"label"`
	Score float64 `json:"score"`
}

type prediction struct {
	Input string   `json:"input"`
	Top   []ranked `json:"top"`
}

func readPredictions(path string) ([]prediction, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v struct {
		Predictions []prediction `json:"predictions"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v.Predictions, nil
}

func norm(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

func check(args []string) error {
	if len(args) != 8 {
		return fmt.Errorf("check MODEL TRAIN.npz FEAT_A.npz FEAT_B.npz PF_A.json PF_B.json PI_A.json PI_B.json")
	}
	ctx := context.Background()
	m, err := modelfile.LoadModel(args[0])
	if err != nil {
		return err
	}
	st := codec.State(m)
	cfg := m.Config()
	mm, k, p := cfg.M, cfg.K, cfg.P
	nc := len(st.Labels)
	coef := st.Coef
	cnorm := make([]float64, nc)
	for j := range cnorm {
		cnorm[j] = norm(coef[j*mm : (j+1)*mm])
	}
	w := codec.Projection(m).Dense() // m×d
	d := m.InputDim()
	scale := codec.InputScale(m)
	col := map[int]int{} // label -> class index
	for j, l := range st.Labels {
		col[l] = j
	}

	train, err := features.Load(args[1])
	if err != nil {
		return err
	}
	expand := func(x []float32) ([]float32, error) { return codec.Expand(ctx, m, x) }
	var traceG float64
	for i := 0; i < train.N; i++ {
		h, err := expand(train.Row(i))
		if err != nil {
			return err
		}
		traceG += norm(h) * norm(h)
	}
	kappa := (traceG + st.Lambda) / st.Lambda
	n := train.N
	fmt.Printf("releasecmp: m=%d k=%d p=%d n=%d classes=%d λ=%.4g trace G=%.4g κ ≤ %.4g\n", mm, k, p, n, nc, st.Lambda, traceG, kappa)

	// tol is the bound of the package comment for input x (expanded h),
	// class index j, plus extra·‖c_j‖.
	tol := func(x, h []float32, j int, extra float64) float64 {
		var habsc float64
		c := coef[j*mm : (j+1)*mm]
		for i, v := range h {
			habsc += math.Abs(float64(v) * float64(c[i]))
		}
		var wx2 float64 // ‖|W||x·scale|‖²
		for r := 0; r < mm; r++ {
			var s float64
			for q := 0; q < d; q++ {
				s += math.Abs(float64(w[r*d+q]) * float64(x[q]) * scale)
			}
			wx2 += s * s
		}
		return 2*kappa*float64(3*mm+1+n)*u*norm(h)*cnorm[j] + 2*float64(k)*u*habsc +
			2*float64(p)*u*math.Sqrt(wx2)*cnorm[j] + extra*cnorm[j]
	}

	compare := func(what string, pa, pb []prediction, xs [][]float32, hs [][]float32, extra []float64) error {
		if len(pa) != len(xs) || len(pb) != len(xs) {
			return fmt.Errorf("%s: %d and %d predictions for %d inputs", what, len(pa), len(pb), len(xs))
		}
		worst := 0.0
		minMargin := math.Inf(1)
		for i := range xs {
			a, b := pa[i], pb[i]
			if len(a.Top) == 0 || len(b.Top) == 0 {
				return fmt.Errorf("%s %s: no classes", what, a.Input)
			}
			if a.Top[0].Label != b.Top[0].Label {
				return fmt.Errorf("%s %s: top-1 class %d on amd64, %d on arm64 (scores %v / %v)", what, a.Input, a.Top[0].Label, b.Top[0].Label, a.Top, b.Top)
			}
			if len(a.Top) > 1 {
				minMargin = math.Min(minMargin, a.Top[0].Score-a.Top[1].Score)
			}
			sb := map[int]float64{}
			for _, r := range b.Top {
				sb[r.Label] = r.Score
			}
			for _, r := range a.Top {
				s, ok := sb[r.Label]
				if !ok {
					return fmt.Errorf("%s %s: class %d in amd64's top classes, not in arm64's", what, a.Input, r.Label)
				}
				t := tol(xs[i], hs[i], col[r.Label], extra[i])
				diff := math.Abs(r.Score - s)
				if !(diff <= t) {
					return fmt.Errorf("%s %s class %d: score %.7g on amd64, %.7g on arm64: |Δ| = %.3g > bound %.3g", what, a.Input, r.Label, r.Score, s, diff, t)
				}
				worst = math.Max(worst, diff/t)
			}
		}
		fmt.Printf("releasecmp: %s: %d inputs, same top-1 on every one (smallest top-1 margin %.4g); largest score difference %.3g of its bound\n", what, len(xs), minMargin, worst)
		return nil
	}

	// 1. Feature files: the same features into both builds.
	pfa, err := readPredictions(args[4])
	if err != nil {
		return err
	}
	pfb, err := readPredictions(args[5])
	if err != nil {
		return err
	}
	var xs, hs [][]float32
	var zero []float64
	for i := 0; i < train.N; i++ {
		h, err := expand(train.Row(i))
		if err != nil {
			return err
		}
		xs, hs, zero = append(xs, train.Row(i)), append(hs, h), append(zero, 0)
	}
	if err := compare("feature file", pfa, pfb, xs, hs, zero); err != nil {
		return err
	}

	// 2. Photos through each build's backbone: features first.
	fa, err := features.Load(args[2])
	if err != nil {
		return err
	}
	fb, err := features.Load(args[3])
	if err != nil {
		return err
	}
	if fa.N != fb.N || fa.D != fb.D {
		return fmt.Errorf("features %d×%d on amd64, %d×%d on arm64", fa.N, fa.D, fb.N, fb.D)
	}
	const layers, fanIn = 52, 960 // the larger of the two built-in backbones' (MobileNetV2)
	fbound := float64(layers*fanIn) * u
	pia, err := readPredictions(args[6])
	if err != nil {
		return err
	}
	pib, err := readPredictions(args[7])
	if err != nil {
		return err
	}
	if fa.Paths == nil {
		return fmt.Errorf("%s has no paths: cannot match the predicted photos", args[2])
	}
	row := map[string]int{} // a photo's path -> its row
	for i, p := range fa.Paths {
		row[filepath.Base(p)] = i
	}
	var worstF float64
	var ext []float64
	for i := 0; i < fa.N; i++ {
		a, b := fa.Row(i), fb.Row(i)
		diff := make([]float32, len(a))
		for q := range a {
			diff[q] = a[q] - b[q]
		}
		rel := norm(diff) / norm(a)
		if !(rel <= fbound) {
			return fmt.Errorf("photo %s: backbone features differ by %.3g (relative), more than %.3g", fa.Paths[i], rel, fbound)
		}
		worstF = math.Max(worstF, rel)
		ha, err := expand(a)
		if err != nil {
			return err
		}
		hb, err := expand(b)
		if err != nil {
			return err
		}
		dh := make([]float32, len(ha))
		for q := range ha {
			dh[q] = ha[q] - hb[q]
		}
		ext = append(ext, norm(dh))
	}
	fmt.Printf("releasecmp: backbone features of %d photos: largest relative difference amd64/arm64 %.3g (bound %.3g)\n", fa.N, worstF, fbound)
	xs, hs = nil, nil
	var extra []float64
	for _, pr := range pia {
		i, ok := row[filepath.Base(pr.Input)]
		if !ok {
			return fmt.Errorf("predicted photo %s is not in %s", pr.Input, args[2])
		}
		h, err := expand(fa.Row(i))
		if err != nil {
			return err
		}
		xs, hs, extra = append(xs, fa.Row(i)), append(hs, h), append(extra, ext[i])
	}
	return compare("photos", pia, pib, xs, hs, extra)
}
