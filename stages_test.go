package flycl

import (
	"encoding/json"
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
