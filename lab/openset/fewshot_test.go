package openset

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/reject"
)

// TestImageNet500Groups: the built-in grouping parses, has the eight
// broad classes and 197 photos, and puts photos where WordNet does (a
// brambling is a bird, a tiger beetle an arthropod, a mongoose and a
// tench in no group).
func TestImageNet500Groups(t *testing.T) {
	g, err := ParseGroups(strings.NewReader(ImageNet500Groups))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, v := range g {
		count[v]++
	}
	want := map[string]int{"dog": 59, "bird": 30, "arthropod": 24, "clothing": 21, "reptile": 18, "wheeled_vehicle": 18, "food": 14, "musical_instrument": 13}
	if len(count) != len(want) {
		t.Fatalf("groups %v, want %v", count, want)
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("group %s: %d photos, want %d", k, count[k], n)
		}
	}
	for wnid, grp := range map[string]string{"n01530575": "bird", "n02165105": "arthropod", "n02137549": "", "n01440764": ""} {
		if g[wnid] != grp {
			t.Errorf("%s in group %q, want %q", wnid, g[wnid], grp)
		}
	}
	for _, bad := range []string{"n1\n", "\tdog\n", "n1\tdog\nn1\tbird\n"} {
		if _, err := ParseGroups(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseGroups(%q) accepted", bad)
		}
	}
}

// FuzzParseGroups: any input parses or is refused, never panics, and
// what parses maps every key to a non-empty group.
func FuzzParseGroups(f *testing.F) {
	f.Add(ImageNet500Groups[:200])
	f.Add("# c\nn1\tdog\n\nn2\tbird\textra\n")
	f.Add("n1\t\n")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGroups(strings.NewReader(s))
		if err != nil {
			return
		}
		for k, v := range g {
			if k == "" || v == "" {
				t.Fatalf("key %q group %q", k, v)
			}
		}
	})
}

// TestFewShotSynthetic: on synthetic photos whose test photos are drawn
// like the learned ones (exchangeable but for the learned photos being
// left out one at a time), the few-shot benchmark's kept share of the
// model's own score is at least the conformal guarantee on average (the
// mean of 20 splits of about 20 known photos each is within 3 standard
// errors of it or above), unknown photos far from every class are
// rejected, the pool is every learned photo, and the calibration table
// has one row per shot count.
func TestFewShotSynthetic(t *testing.T) {
	const d, groups, per = 16, 4, 12
	r := rand.New(rand.NewPCG(5, 6))
	centre := func(c int) []float64 {
		cr := rand.New(rand.NewPCG(uint64(c), 99))
		v := make([]float64, d)
		for j := range v {
			v[j] = 2 * cr.NormFloat64()
		}
		return v
	}
	photos := &features.Set{D: d}
	groupOf := map[string]string{}
	add := func(s *features.Set, c, n int, name string) {
		cv := centre(c)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				s.X = append(s.X, float32(cv[j]+r.NormFloat64()))
			}
			s.Labels = append(s.Labels, len(s.ClassNames))
			s.ClassNames = append(s.ClassNames, name)
			s.N++
		}
	}
	for g := 0; g < groups; g++ {
		add(photos, g, per, "known")
		for i := photos.N - per; i < photos.N; i++ {
			photos.ClassNames[i] = string(rune('a'+g)) + string(rune('a'+i%26)) + string(rune('0'+i/26))
			groupOf[photos.ClassNames[i]] = string(rune('A' + g))
		}
	}
	add(photos, 50, 30, "far1") // unknown ImageNet-like photos: other centres
	for i := photos.N - 30; i < photos.N; i++ {
		photos.ClassNames[i] = "u" + string(rune('a'+i%26)) + string(rune('0'+i/26))
	}
	other := &features.Set{D: d}
	add(other, 60, 30, "far2")
	res, err := FewShot(context.Background(), []FewShotSet{{Name: "syn", Photos: photos, Groups: groupOf, Other: other}},
		FewShotConfig{Model: flycl.Config{M: 300, P: 6, K: 90, Lambdas: []float64{1e-1, 1, 10, 100}}, Shots: []int{3, 5}, Splits: 20,
			Scores: []reject.Score{reject.ScoreTopCosine, reject.ScoreTop}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2*2*2 || len(res.Calib) != 2 || res.Groups != groups {
		t.Fatalf("%d rows, %d calibration rows, %d groups", len(res.Rows), len(res.Calib), res.Groups)
	}
	for _, row := range res.Rows {
		n := groups * row.Shots
		if row.Pool != n || row.Guaranteed != reject.GuaranteedKeep(n, row.Keep) {
			t.Errorf("%+v: want a pool of %d", row, n)
		}
		// the kept share of one split is a mean over 4 classes of
		// (per−shots) photos each: its standard deviation is at most
		// √(g(1−g)/(groups·(per−shots))); over 20 splits, /√20
		g := row.Guaranteed
		se := math.Sqrt(g*(1-g)/float64(groups*(per-row.Shots))) / math.Sqrt(20)
		if row.Kept < g-3*se {
			t.Errorf("%s %d shots, asked %g: kept %.3f, guaranteed %.3f (standard error %.3f)", row.Score, row.Shots, row.Keep, row.Kept, g, se)
		}
		if row.Score == reject.ScoreTopCosine && (row.RejectedImageNet < 0.9 || row.RejectedOther < 0.9) {
			t.Errorf("%+v: far unknown photos accepted", row)
		}
	}
	for _, c := range res.Calib {
		if !(c.T > 0) || math.IsNaN(c.ECEAll) || c.Accuracy < 0.9 {
			t.Errorf("calibration %+v", c)
		}
	}
}
