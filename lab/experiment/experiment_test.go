package experiment

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/protocol"
)

// blobs: C classes with well-separated means; a nearest-mean rule is
// essentially perfect on them.
func blobs(seed uint64, c, perClass, d int, sep float64) *features.Set {
	r := rand.New(rand.NewPCG(seed, 9))
	s := &features.Set{D: d}
	for k := 0; k < c; k++ {
		mr := rand.New(rand.NewPCG(uint64(k), 77))
		mean := make([]float64, d)
		for j := range mean {
			mean[j] = sep * mr.NormFloat64()
		}
		for i := 0; i < perClass; i++ {
			for j := 0; j < d; j++ {
				s.X = append(s.X, float32(mean[j]+r.NormFloat64()))
			}
			s.Labels = append(s.Labels, k)
			s.N++
		}
	}
	return s
}

// oracle learns the class means seen so far and predicts the nearest one:
// an independent method whose outcome on separated blobs is predictable.
type oracle struct {
	d     int
	means map[int][]float64
}

func (o *oracle) LearnTask(_ context.Context, x []float32, labels []int) error {
	sums, counts := map[int][]float64{}, map[int]int{}
	for i, l := range labels {
		if sums[l] == nil {
			sums[l] = make([]float64, o.d)
		}
		for j := 0; j < o.d; j++ {
			sums[l][j] += float64(x[i*o.d+j])
		}
		counts[l]++
	}
	for l, s := range sums {
		for j := range s {
			s[j] /= float64(counts[l])
		}
		o.means[l] = s
	}
	return nil
}

func (o *oracle) Predict(_ context.Context, x []float32) ([]int, error) {
	n := len(x) / o.d
	out := make([]int, n)
	for i := 0; i < n; i++ {
		best := math.Inf(1)
		for l, m := range o.means {
			var dist float64
			for j := range m {
				v := float64(x[i*o.d+j]) - m[j]
				dist += v * v
			}
			if dist < best || (dist == best && l < out[i]) {
				best, out[i] = dist, l
			}
		}
	}
	return out, nil
}

// forgetful only remembers its last task: BWT must come out as -100%.
type forgetful struct{ oracle }

func (f *forgetful) LearnTask(ctx context.Context, x []float32, labels []int) error {
	f.means = map[int][]float64{}
	return f.oracle.LearnTask(ctx, x, labels)
}

func TestExecute(t *testing.T) {
	const c, d = 6, 8
	train, test := blobs(1, c, 40, d, 4), blobs(2, c, 20, d, 4)
	ms := []Method{
		{"oracle", func(d int, _ int64) (Learner, error) { return &oracle{d: d, means: map[int][]float64{}}, nil }},
		{"forgetful", func(d int, _ int64) (Learner, error) {
			return &forgetful{oracle{d: d, means: map[int][]float64{}}}, nil
		}},
	}
	var events []Event
	res, err := Execute(context.Background(), train, test, ms,
		Protocol{Order: protocol.OrderFlyCL, Seeds: []int64{1993, 7}, Tasks: 3},
		Hooks{Progress: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 || len(events) != 12 || events[11].Step != 12 || events[11].Steps != 12 {
		t.Fatalf("%d runs, %d events", len(res.Runs), len(events))
	}
	for _, run := range res.Runs {
		want, _ := protocol.ClassOrder(protocol.OrderFlyCL, c, run.Seed)
		if !slices.Equal(run.ClassOrder, want) || len(run.Tasks) != 3 || len(run.Tasks[0]) != 2 {
			t.Fatalf("seed %d: order %v tasks %v", run.Seed, run.ClassOrder, run.Tasks)
		}
		if !slices.Equal(run.TrainSizes, []int{80, 80, 80}) || len(run.TauPost) != 3 || run.TauTrain != nil {
			t.Fatalf("sizes %v tau %v/%v", run.TrainSizes, run.TauPost, run.TauTrain)
		}
		m := run.Matrix
		switch run.Method {
		case "oracle":
			if m.Last(false) < 0.99 || math.Abs(m.BWT()) > 0.01 {
				t.Errorf("oracle: A_T %.3f BWT %.3f", m.Last(false), m.BWT())
			}
		case "forgetful":
			// old tasks are never predicted again: a(T,i) = 0 for i < T
			if math.Abs(m.BWT()+m.Acc(0, 0)) > 0.02 || m.Acc(2, 0) != 0 || m.Acc(2, 2) < 0.99 {
				t.Errorf("forgetful: BWT %.3f a(2,0) %.3f", m.BWT(), m.Acc(2, 0))
			}
		}
	}
}

func TestExecuteErrors(t *testing.T) {
	train, test := blobs(1, 4, 5, 3, 4), blobs(2, 4, 5, 3, 4)
	ms := []Method{{"oracle", func(d int, _ int64) (Learner, error) { return &oracle{d: d, means: map[int][]float64{}}, nil }}}
	ctx := context.Background()
	bad := *test
	bad.Labels = slices.Clone(test.Labels)
	bad.Labels[3] = 9
	for name, f := range map[string]func() error{
		"unseen test label": func() error { _, err := Execute(ctx, train, &bad, ms, Protocol{Tasks: 2}, Hooks{}); return err },
		"uneven tasks":      func() error { _, err := Execute(ctx, train, test, ms, Protocol{Tasks: 3}, Hooks{}); return err },
		"bad order": func() error {
			_, err := Execute(ctx, train, test, ms, Protocol{Order: "x", Tasks: 2}, Hooks{})
			return err
		},
		"bad list": func() error {
			_, err := Execute(ctx, train, test, ms, Protocol{List: []int{0, 1, 1, 2}, Tasks: 2}, Hooks{})
			return err
		},
		"no methods": func() error { _, err := Execute(ctx, train, test, nil, Protocol{Tasks: 2}, Hooks{}); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
