package flycl

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestStagesNamesAndJSON(t *testing.T) {
	all := AllStages()
	if len(all) != 6 {
		t.Fatalf("%d stages", len(all))
	}
	// The names are the wire format of result.json and model files
	// written before the typed stages existed: they must not change.
	want := []string{"projection", "topk", "gram", "gcv", "factor", "solve"}
	var s Stages
	for i, st := range all {
		if st.String() != want[i] {
			t.Errorf("stage %d is %q, want %q", i, st, want[i])
		}
		if p, err := ParseStage(want[i]); err != nil || p != st {
			t.Errorf("ParseStage(%q) = %v, %v", want[i], p, err)
		}
		s.Set(st, time.Duration(i+1)*time.Millisecond)
	}
	if s.Projection != time.Millisecond || s.Solve != 6*time.Millisecond || s.Total() != 21*time.Millisecond {
		t.Fatalf("Set: %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"projection":0.001,"topk":0.002,"gram":0.003,"gcv":0.004,"factor":0.005,"solve":0.006}` {
		t.Errorf("JSON %s", b)
	}
	var back Stages
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Errorf("round trip %+v, %v", back, err)
	}
	// A record of an older writer (a map with some stages) still reads.
	if err := json.Unmarshal([]byte(`{"gcv": 1.5}`), &back); err != nil || back != (Stages{GCV: 1500 * time.Millisecond}) {
		t.Errorf("partial: %+v, %v", back, err)
	}
	for _, bad := range []string{`{"warp": 1}`, `{"gcv": -1}`, `{"gcv": 1e300}`, `[1]`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s: no error", bad)
		} else if strings.Contains(bad, "warp") && !strings.Contains(err.Error(), "warp") {
			t.Errorf("%s: error does not name the stage: %v", bad, err)
		}
	}
	if _, err := ParseStage("Projection"); err == nil {
		t.Error("ParseStage is case-sensitive: no error")
	}
	var sum Stages
	sum.Add(s)
	sum.Add(s)
	if sum.Scale(0.5) != s {
		t.Errorf("Add/Scale: %+v", sum.Scale(0.5))
	}
}

// FuzzStages: stage times are read from result and model files: any
// JSON is refused or read as times a time.Duration holds (never a
// negative one from an overflow), which written back read again as the
// same times, to the float64 seconds' precision: the encoding's Seconds
// rounds twice (its nanoseconds' division and the sum) and the decoding's
// ×1e9 once, each by at most 2⁻⁵³ relative, and the decoding rounds to
// the nanosecond, so |Δ| ≤ 3·2⁻⁵³·|d| + ½ ns, within |d|·2⁻⁵¹ + 1 ns.
func FuzzStages(f *testing.F) {
	for _, s := range []string{`{"projection":0.1,"topk":0.02,"gram":1.5,"gcv":0,"factor":3e-9,"solve":86400}`,
		`{}`, `{"gram":-1}`, `{"nope":1}`, `{"gram":9223372036.854776}`, `{"gram":9223372036.854775}`,
		`{"gram":1e400}`, `{"gram":"1"}`, `null`, `[]`, `{"solve":1e-10,"solve":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Stages
		if err := json.Unmarshal(b, &s); err != nil {
			return
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var again Stages
		if err := json.Unmarshal(js, &again); err != nil {
			t.Fatalf("%s read as %s, which is refused: %v", b, js, err)
		}
		for _, st := range AllStages() {
			d, d2 := s.Get(st), again.Get(st)
			if d < 0 {
				t.Fatalf("%s: stage %s read as %v", b, st, d)
			}
			if diff := math.Abs(float64(d2 - d)); diff > float64(d)*0x1p-51+1 {
				t.Fatalf("%s: stage %s %v written back as %s read as %v", b, st, d, js, d2)
			}
		}
	})
}
