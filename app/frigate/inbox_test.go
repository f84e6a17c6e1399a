package frigate

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// featured is redness with features: the crop's mean red as a
// 2-vector, and top scores.
type featured struct{ redness }

func (f featured) ClassifyFeatures(ctx context.Context, img *imageio.RGB) (watch.Prediction, []float32, error) {
	p, err := f.Classify(ctx, img)
	var s float64
	for i := 0; i < len(img.Pix); i += 3 {
		s += float64(img.Pix[i])
	}
	r := float32(s / float64(img.W*img.H) / 255)
	p.Top = []flycl.Ranked{{Name: "robin", Score: r}, {Name: "sparrow", Score: 1 - r}}
	return p, []float32{r, 1 - r}, err
}

// TestKeeperInbox: with a Keeper, the crops answered unknown and those
// under the probability policy are kept in the inbox with their camera,
// Frigate's label, guess and features, and one in every Sample of the
// confident ones; the inbox's items are what the classifier saw.
func TestKeeperInbox(t *testing.T) {
	// red 30: unknown; 100: sparrow p=0.39 (under 0.6); 200: robin p=0.78 (confident)
	red := map[string]uint8{"u": 30, "low": 100}
	for i := range 10 {
		red[fmt.Sprintf("ok%d", i)] = 200
	}
	srv := httptest.NewServer(&fakeFrigate{red: red})
	defer srv.Close()
	ib, err := inbox.Open(t.TempDir(), inbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	k := &Keeper{Inbox: ib, Policy: inbox.Policy{Probability: 0.6}, Sample: 5, Log: quietLog()}
	l, err := New(Config{Frigate: srv.URL, Classify: featured{}, Rule: oneTry, Keep: k.Keep, Workers: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"u", "low"}
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("ok%d", i))
	}
	for _, id := range ids {
		l.Handle(msg("new", id, "garden", "bird", [4]int{0, 0, 100, 100}, 1, false))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	for end := time.Now().Add(10 * time.Second); !l.finished() && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	k.Close()
	items := ib.List()
	var whys []string
	for _, it := range items {
		whys = append(whys, string(it.Why))
		if it.Camera != "garden" || it.Zone != "bird" {
			t.Fatalf("item %+v: want camera garden, zone bird (Frigate's label)", it)
		}
		x, err := ib.Features(it.ID)
		if err != nil || len(x) != 2 || x[0]+x[1] != 1 {
			t.Fatalf("item %s features %v: %v", it.ID, x, err)
		}
	}
	slices.Sort(whys)
	// 10 confident crops, one in 5 kept: 2
	if want := []string{"low-probability", "sample", "sample", "unknown"}; !slices.Equal(whys, want) {
		t.Fatalf("kept %v, want %v", whys, want)
	}
	if st := k.Stats(); st.Kept != 4 || st.Dropped != 0 || st.Failed != 0 {
		t.Fatalf("keeper stats %+v", st)
	}
}
