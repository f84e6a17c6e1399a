package openset

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
)

// WriteVideoFrames writes every track and empty scene under names
// VideoFrameName reads back, and the same config writes the same bytes.
func TestWriteVideoFrames(t *testing.T) {
	photos := t.TempDir()
	for i, name := range []string{"n00000001_cat.JPEG", "n00000002_dog_x.JPEG", "n00000003_patio.JPEG"} {
		img := image.NewRGBA(image.Rect(0, 0, 40+8*i, 30))
		for p := range img.Pix {
			img.Pix[p] = uint8(37*p + 11*i)
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, nil); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(photos, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := VideoFramesConfig{Photos: photos, Scenes: []string{"n00000003_patio.JPEG"}, Frames: 3, Empty: 2, Size: 32}
	read := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out[p[len(dir):]], _ = os.ReadFile(p)
			}
			return err
		})
		return out
	}
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		n, err := WriteVideoFrames(context.Background(), cfg, dir)
		if want := 2*3*2 + 2; err != nil || n != want { // 2 photos × 3 frames × (crop + 1 scene) + 2 empty
			t.Fatalf("%d frames, %v; want %d", n, err, want)
		}
	}
	fa, fb := read(a), read(b)
	views := map[string]int{}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Errorf("%s differs between two runs", name)
		}
		view, photo, k, err := VideoFrameName(name)
		if err != nil || k < 0 || k > 2 {
			t.Fatalf("%s: %v", name, err)
		}
		views[view]++
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil || img.Bounds().Dx() != 32 || img.Bounds().Dy() != 32 {
			t.Errorf("%s: not a 32×32 JPEG (%v)", name, err)
		}
		if view == "empty-n00000003_patio" && photo != "n00000003_patio" {
			t.Errorf("%s: an empty frame of photo %s", name, photo)
		}
	}
	if views[ViewCrop] != 6 || views["n00000003_patio"] != 6 || views["empty-n00000003_patio"] != 2 {
		t.Errorf("frames per view %v", views)
	}
	if _, _, _, err := VideoFrameName("x/crop@a.jpg"); err == nil {
		t.Error("a name without a frame index parsed")
	}
}

// videoSet makes a feature set of tracks: groups g0, g1 of 8 photos each
// and 20 strangers, each photo a point (class directions for the known,
// another direction for the strangers) whose frames are that point plus
// noise, in a crop view and a scene view with 12 empty frames.
func videoSet(noise float64) (VideoSet, map[string]string) {
	const d, frames = 12, 5
	r := rand.New(rand.NewPCG(9, 10))
	set := &features.Set{D: d}
	groups := map[string]string{}
	add := func(view, photo string, centre []float64) {
		for k := 0; k < frames; k++ {
			for j := 0; j < d; j++ {
				set.X = append(set.X, float32(centre[j]+noise*r.NormFloat64()))
			}
			set.Labels = append(set.Labels, 0)
			set.Paths = append(set.Paths, fmt.Sprintf("f/%s@%s@%d.jpg", view, photo, k))
			set.N++
		}
	}
	point := func(dir int, spread float64) []float64 {
		c := make([]float64, d)
		c[dir] = 3
		for j := range c {
			c[j] += spread * r.NormFloat64()
		}
		return c
	}
	var photos []struct {
		name   string
		centre []float64
	}
	for g := 0; g < 2; g++ {
		for i := 0; i < 8; i++ {
			wnid := fmt.Sprintf("n%08d", 100*g+i)
			groups[wnid] = fmt.Sprintf("g%d", g)
			photos = append(photos, struct {
				name   string
				centre []float64
			}{wnid + "_p", point(g, 0.5)})
		}
	}
	for i := 0; i < 20; i++ {
		photos = append(photos, struct {
			name   string
			centre []float64
		}{fmt.Sprintf("n%08d_s", 900+i), point(2+i%5, 1)})
	}
	for _, p := range photos {
		add(ViewCrop, p.name, p.centre)
		add("n99999999_scene", p.name, p.centre)
	}
	scene := point(10, 0.2)
	for k := 0; k < 12; k++ {
		for j := 0; j < d; j++ {
			set.X = append(set.X, float32(scene[j]+0.05*r.NormFloat64()))
		}
		set.Labels = append(set.Labels, 0)
		set.Paths = append(set.Paths, fmt.Sprintf("f/empty-n99999999_scene@n99999999_scene@%d.jpg", k))
		set.N++
	}
	return VideoSet{Name: "synthetic", Frames: set, Groups: groups}, groups
}

// On tracks whose frames are all the same point, every rule that decides
// an object from its frames at the per-frame threshold decides it as its
// first frame does: each object is labelled all or nothing, so its share
// per object is its share per frame, exactly. The counts are those of
// the protocol (splits × views × the photos not learned).
func TestVideoIdenticalFrames(t *testing.T) {
	s, _ := videoSet(0)
	cfg := VideoConfig{Model: flycl.Config{M: 200, P: 6, K: 60, LambdaScale: flycl.LambdaRelative}, Shots: 3, Splits: 2, None: 4, Background: 6}
	res, err := Video(context.Background(), []VideoSet{s}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range res.Rows {
		if r.Objects != 2*(8-3)*2 || r.Strangers != 2*(20-4) {
			t.Errorf("%s %s %s: %d known objects and %d strangers, want %d and %d", r.View, r.Learn, r.Rule, r.Objects, r.Strangers, 20, 32)
		}
		// an object's mean and least value are its frames' one value,
		// and the threshold keeping 90% of the known frames (each value
		// 5 times) is the one keeping 90% of the objects: one ROC point
		if r.BetweenKnown != 1 && !math.IsNaN(r.BetweenKnown) {
			t.Errorf("%s %s %s: identical frames, yet %g of the known values' variance between objects, want 1", r.View, r.Learn, r.Rule, r.BetweenKnown)
		}
		if r.ObjectROC90Mean != r.FrameROC90 || r.ObjectROC90Min != r.FrameROC90 {
			t.Errorf("%s %s %s: identical frames, yet strangers at 90%% kept %g per frame, %g and %g per object", r.View, r.Learn, r.Rule, r.FrameROC90, r.ObjectROC90Mean, r.ObjectROC90Min)
		}
		// the reserved classes' bias chosen too can only do better than
		// the value alone (b = −∞ is the value alone, split by split)
		if hasReserved := r.Learn != VideoPlain; hasReserved != !math.IsNaN(r.FrameROC90Reserved) || r.FrameROC90Reserved > r.FrameROC90 {
			t.Errorf("%s %s %s: strangers' frames at 90%% kept with the reserved bias %g, by the value alone %g", r.View, r.Learn, r.Rule, r.FrameROC90Reserved, r.FrameROC90)
		}
		if r.Rule == RuleTrack {
			continue
		}
		if math.Abs(r.StrangerObject-r.StrangerFrame) > 1e-12 || math.Abs(r.KeptObject-r.KeptFrame) > 1e-12 {
			t.Errorf("%s %s %s: identical frames, yet per object %g/%g and per frame %g/%g", r.View, r.Learn, r.Rule, r.StrangerObject, r.KeptObject, r.StrangerFrame, r.KeptFrame)
		}
	}
}

// Strangers in directions no class has are rejected, known objects near
// their class are kept and named right, and the learned empty scene is
// never labelled: the separable case every rule must get right.
func TestVideoSeparable(t *testing.T) {
	s, _ := videoSet(0.05)
	cfg := VideoConfig{Model: flycl.Config{M: 200, P: 6, K: 60, LambdaScale: flycl.LambdaRelative}, Shots: 3, Splits: 2, None: 4, Background: 6}
	res, err := Video(context.Background(), []VideoSet{s}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.Learn != VideoPlain && r.Learn != VideoBackground {
			continue
		}
		if r.StrangerObject > 0.1 || r.RightObject < 0.9 {
			t.Errorf("%s %s %s: strangers labelled %g, known right %g", r.View, r.Learn, r.Rule, r.StrangerObject, r.RightObject)
		}
		if r.FrameROC90 > 0.1 || r.ObjectROC90Mean > 0.1 || r.ObjectROC90Min > 0.1 {
			t.Errorf("%s %s: strangers above the threshold keeping 90%% of the known: %g per frame, %g and %g per object", r.View, r.Learn, r.FrameROC90, r.ObjectROC90Mean, r.ObjectROC90Min)
		}
		if r.Learn == VideoBackground && r.EmptyFrame != 0 {
			t.Errorf("%s %s: the learned empty scene labelled in %g of its frames", r.View, r.Rule, r.EmptyFrame)
		}
	}
}

// rocPoint against values counted by hand: the threshold keeping 90% of
// the known values 1..10 is 2 (9 of 10 at least as high), and the
// unknown values at least 2 are 2 of 4; at 95% it is 1 (10 of 10:
// 9.5 is not a whole count), and 3 of 4 are at least 1.
func TestVideoROCPoint(t *testing.T) {
	known := []float64{7, 3, 10, 1, 9, 2, 8, 4, 6, 5}
	unknown := []float64{0.5, 1, 2.5, 11}
	if got := rocPoint(known, unknown, 0.9); got != 0.5 {
		t.Errorf("at 90%%: %g, want 0.5 (threshold 2)", got)
	}
	if got := rocPoint(known, unknown, 0.95); got != 0.75 {
		t.Errorf("at 95%%: %g, want 0.75 (threshold 1)", got)
	}
	if got := rocPoint(known, unknown, 0.5); got != 0.25 { // threshold 6: only 11
		t.Errorf("at 50%%: %g, want 0.25", got)
	}
	if got := rocPoint(nil, unknown, 0.9); !math.IsNaN(got) {
		t.Errorf("no known values: %g, want NaN", got)
	}
}

// reservedROCPoint against frames counted by hand. Ten known frames, values
// 1..10; the two of value 1 and 2 have margin −1 (a reserved class beats
// them), the others +1. Four strangers: (value 9, margin −1), (8, −1),
// (3, +1), (0.5, +1). At 80% (2 of 10 may be lost):
//   - b = −∞: t = 3 (values 1, 2 dropped): strangers 9, 8, 3 labelled: 3/4;
//   - b = −1: the same frames, the same 3/4;
//   - b = +1: frames 1 and 2 lost to the margin, t = 3: only (3, +1): 1/4.
//
// The least is 1/4, where rocPoint on the values alone gives 3/4. At 90%
// (1 may be lost) b = +1 loses 2: only b ≤ −1 is allowed, t = 2: 3/4.
func TestVideoReservedROCPoint(t *testing.T) {
	var known []frame
	for v := 1; v <= 10; v++ {
		m := 1.0
		if v <= 2 {
			m = -1
		}
		known = append(known, frame{value: float64(v), margin: m})
	}
	unknown := []frame{{value: 9, margin: -1}, {value: 8, margin: -1}, {value: 3, margin: 1}, {value: 0.5, margin: 1}}
	if got := reservedROCPoint(known, unknown, 0.8); got != 0.25 {
		t.Errorf("at 80%%: %g, want 0.25 (b = +1, t = 3)", got)
	}
	if got := reservedROCPoint(known, unknown, 0.9); got != 0.75 {
		t.Errorf("at 90%%: %g, want 0.75 (b = −1, t = 2)", got)
	}
	// without reserved classes (every margin 0) it is rocPoint's point
	var kv, uv []float64
	for i := range known {
		known[i].margin = 0
		kv = append(kv, known[i].value)
	}
	for i := range unknown {
		unknown[i].margin = 0
		uv = append(uv, unknown[i].value)
	}
	for _, keep := range []float64{0.5, 0.8, 0.9, 0.95} {
		if got, want := reservedROCPoint(known, unknown, keep), rocPoint(kv, uv, keep); got != want {
			t.Errorf("margins 0, keep %g: %g, want rocPoint's %g", keep, got, want)
		}
	}
	if got := reservedROCPoint(nil, unknown, 0.9); !math.IsNaN(got) {
		t.Errorf("no known frames: %g, want NaN", got)
	}
}

// Targets picks, per view and learn, the rule keeping at least 90% of the
// known objects that labels the fewest strangers, and compares it with
// half the single frame's rate. The rows are made by hand.
func TestVideoTargets(t *testing.T) {
	row := func(view, learn, rule string, sf, so, ko float64) VideoRow {
		return VideoRow{Set: "s", View: view, Learn: learn, Rule: rule, StrangerFrame: sf, StrangerObject: so, KeptObject: ko}
	}
	r := &VideoResult{Rows: []VideoRow{
		row("crop", VideoPlain, RuleFirst, 0.8, 0.8, 0.97),
		row("crop", VideoNone, RuleFirst, 0.4, 0.1, 0.95),
		row("scene", VideoPlain, RuleFirst, 0.9, 0.9, 0.85),
	}, Sweep: []VideoRow{
		row("crop", VideoPlain, RuleFirst, 0, 0.8, 0.97),
		row("crop", VideoPlain, RuleVote, 0, 0.5, 0.95),
		row("crop", VideoPlain, RuleDebounce, 0, 0.3, 0.89), // keeps too few
		row("crop", VideoPlain, RuleTrack, 0, 0.41, 0.90),   // the best: exactly 90%
		row("crop", VideoNone, RuleFirst, 0, 0.1, 0.95),
		row("scene", VideoPlain, RuleFirst, 0, 0.9, 0.85),
		row("scene", VideoPlain, RuleVote, 0, 0.2, 0.5),
	}}
	got := r.Targets()
	if len(got) != 3 {
		t.Fatalf("%d targets, want 3 (crop, crop with none, scene)", len(got))
	}
	if c := got[0]; c.Best == nil || c.Best.Rule != RuleTrack || c.Met {
		t.Errorf("crop: best %+v, met %v; want the track rule, 0.41 > 0.8/2: not met", c.Best, c.Met)
	}
	if c := got[1]; c.Frame.Learn != VideoNone || c.Best == nil || c.Best.StrangerObject != 0.1 || !c.Met {
		t.Errorf("crop with none: %+v; want its own sweep's 0.1 ≤ 0.4/2: met", c)
	}
	if s := got[2]; s.Best != nil || s.Met {
		t.Errorf("scene: best %+v, met %v; want no rule keeping 90%%", s.Best, s.Met)
	}
	r.Sweep[3].StrangerObject = 0.4 // at most half: exactly half meets it
	if c := r.Targets()[0]; !c.Met {
		t.Errorf("crop: 0.4 ≤ 0.8/2, yet not met")
	}
}

// The sweep at the configured keep is the table's rule at that keep (the
// first frame, the vote, the debounce: same threshold, same decisions),
// and a lower per-frame keep (a threshold at least as high) never labels
// more objects with the first frame, whose object is its frame.
func TestVideoSweep(t *testing.T) {
	s, _ := videoSet(0.4)
	cfg := VideoConfig{Model: flycl.Config{M: 200, P: 6, K: 60, LambdaScale: flycl.LambdaRelative}, Shots: 3, Splits: 2, None: 4, Background: 6, Keep: 0.9}
	res, err := Video(context.Background(), []VideoSet{s}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ view, learn, rule string }
	at := map[key][]VideoRow{}
	for _, p := range res.Sweep {
		at[key{p.View, p.Learn, p.Rule}] = append(at[key{p.View, p.Learn, p.Rule}], p)
	}
	if want := len(res.Rows) * len(VideoSweepKeeps(cfg.Keep)); len(res.Sweep) != want {
		t.Fatalf("%d sweep points, want %d", len(res.Sweep), want)
	}
	for _, r := range res.Rows {
		pts := at[key{r.View, r.Learn, r.Rule}]
		if r.Rule != RuleTrack {
			i := slices.IndexFunc(pts, func(p VideoRow) bool { return p.FrameKeep == cfg.Keep })
			if i < 0 || pts[i].StrangerObject != r.StrangerObject || pts[i].KeptObject != r.KeptObject {
				t.Errorf("%s %s %s: sweep at keep %g %+v, table %g / %g", r.View, r.Learn, r.Rule, cfg.Keep, pts, r.StrangerObject, r.KeptObject)
			}
		}
		if r.Rule != RuleFirst {
			continue
		}
		slices.SortFunc(pts, func(a, b VideoRow) int { return cmp.Compare(b.FrameKeep, a.FrameKeep) })
		for i := 1; i < len(pts); i++ {
			if pts[i].StrangerObject > pts[i-1].StrangerObject || pts[i].KeptObject > pts[i-1].KeptObject {
				t.Errorf("%s %s: keep %g labels more than keep %g: %+v, %+v", r.View, r.Learn, pts[i].FrameKeep, pts[i-1].FrameKeep, pts[i], pts[i-1])
			}
		}
	}
}

// betweenShare against sums done by hand: groups {1, 3} and {5, 7},
// mean 4: total Σ(v−4)² = 9+1+1+9 = 20, within (1+1)+(1+1) = 4, so
// 1 − 4/20 = 0.8; groups alike inside give 1, and a bad grouping NaN.
func TestVideoBetweenShare(t *testing.T) {
	if got := betweenShare([]float64{1, 3, 5, 7}, 2); math.Abs(got-0.8) > 1e-15 {
		t.Errorf("got %g, want 0.8", got)
	}
	if got := betweenShare([]float64{2, 2, 9, 9}, 2); got != 1 {
		t.Errorf("identical frames: %g, want 1", got)
	}
	if got := betweenShare([]float64{1, 2, 3}, 2); !math.IsNaN(got) {
		t.Errorf("3 values in groups of 2: %g, want NaN", got)
	}
	if got := betweenShare([]float64{4, 4}, 1); !math.IsNaN(got) {
		t.Errorf("no variance: %g, want NaN", got)
	}
}

// With SubtractScene, a scene view whose frames are the crop view's plus
// the scene (exactly: values on a grid of 2⁻¹⁰ that float32 adds and
// subtracts without rounding) and whose empty frames are the scene alone
// becomes the crop view: every share of the learns both views have is
// the crop's, to the bit. Without it the scene's rows differ.
func TestVideoSubtractScene(t *testing.T) {
	const d, frames = 12, 5
	r := rand.New(rand.NewPCG(3, 4))
	q := func(v float64) float32 { return float32(math.Round(v*1024) / 1024) }
	scene := make([]float32, d)
	for j := range scene {
		scene[j] = float32(4 + j%3) // whole numbers: exact in any sum here
	}
	set := &features.Set{D: d}
	groups := map[string]string{}
	add := func(view, photo string, k int, x []float32) {
		set.X = append(set.X, x...)
		set.Labels = append(set.Labels, 0)
		set.Paths = append(set.Paths, fmt.Sprintf("f/%s@%s@%d.jpg", view, photo, k))
		set.N++
	}
	photo := func(name string, dir int, spread float64) {
		c := make([]float64, d)
		c[dir] = 3
		for j := range c {
			c[j] += spread * r.NormFloat64()
		}
		for k := 0; k < frames; k++ {
			crop, inScene := make([]float32, d), make([]float32, d)
			for j := range crop {
				crop[j] = q(c[j] + 0.4*r.NormFloat64())
				inScene[j] = crop[j] + scene[j]
			}
			add(ViewCrop, name, k, crop)
			add("n99999999_scene", name, k, inScene)
		}
	}
	for g := 0; g < 2; g++ {
		for i := 0; i < 8; i++ {
			wnid := fmt.Sprintf("n%08d", 100*g+i)
			groups[wnid] = fmt.Sprintf("g%d", g)
			photo(wnid+"_p", g, 0.5)
		}
	}
	for i := 0; i < 20; i++ {
		photo(fmt.Sprintf("n%08d_s", 900+i), 2+i%5, 1)
	}
	for k := 0; k < 12; k++ {
		add("empty-n99999999_scene", "n99999999_scene", k, scene)
	}
	s := VideoSet{Name: "synthetic", Frames: set, Groups: groups}
	cfg := VideoConfig{Model: flycl.Config{M: 200, P: 6, K: 60, LambdaScale: flycl.LambdaRelative}, Shots: 3, Splits: 2, None: 4, Background: 6}
	for _, sub := range []bool{false, true} {
		cfg.SubtractScene = sub
		res, err := Video(context.Background(), []VideoSet{s}, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		crop := map[string]VideoRow{}
		for _, x := range res.Rows {
			if x.View == ViewCrop {
				crop[x.Learn+"|"+x.Rule] = x
			}
		}
		differ := 0
		for _, x := range res.Rows {
			c, ok := crop[x.Learn+"|"+x.Rule]
			if x.View == ViewCrop || !ok {
				continue
			}
			same := x.StrangerFrame == c.StrangerFrame && x.StrangerObject == c.StrangerObject && x.KeptFrame == c.KeptFrame &&
				x.KeptObject == c.KeptObject && x.RightObject == c.RightObject && x.AUROCFrame == c.AUROCFrame && x.AUROCObject == c.AUROCObject
			if sub && !same {
				t.Errorf("%s %s: the scene less its mean %+v, the crop %+v", x.Learn, x.Rule, x, c)
			}
			if !same {
				differ++
			}
		}
		if !sub && differ == 0 {
			t.Error("the scene's rows are the crop's without subtracting the scene: the test shows nothing")
		}
	}
}
