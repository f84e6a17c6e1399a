package flycl

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// Stage names one step of learning a task (or a mini-batch). The stages
// are the one definition of the names files use: run results, model
// files (table headers take theirs from report.StageLabel).
type Stage int

// The stages of learning, in pipeline order.
const (
	StageProjection Stage = iota // h = x Wᵀ
	StageTopK                    // keep the k largest coordinates
	StageGram                    // G += HᵀH, S += HᵀY
	StageGCV                     // choose λ by generalised cross-validation
	StageFactor                  // Cholesky of G + λI
	StageSolve                   // C = (G + λI)⁻¹ S
	numStages
)

var stageNames = [numStages]string{"projection", "topk", "gram", "gcv", "factor", "solve"}

// AllStages returns every stage in pipeline order.
func AllStages() []Stage {
	out := make([]Stage, numStages)
	for i := range out {
		out[i] = Stage(i)
	}
	return out
}

// String returns the stage's name in files ("projection", "topk", "gram",
// "gcv", "factor", "solve").
func (s Stage) String() string {
	if s < 0 || s >= numStages {
		return fmt.Sprintf("Stage(%d)", int(s))
	}
	return stageNames[s]
}

// ParseStage returns the stage named name (as String writes it).
func ParseStage(name string) (Stage, error) {
	for i, n := range stageNames {
		if n == name {
			return Stage(i), nil
		}
	}
	return 0, fmt.Errorf("flycl: unknown stage %q (known: %s)", name, strings.Join(stageNames[:], ", "))
}

// Stages are the wall times of the steps of learning one task (or batch).
// In JSON they are an object of seconds by stage name, in pipeline order:
// {"projection": 0.1, "topk": 0.02, ...}.
type Stages struct {
	Projection time.Duration // h = x Wᵀ
	TopK       time.Duration
	Gram       time.Duration // G += HᵀH, S += HᵀY
	GCV        time.Duration
	Factor     time.Duration // Cholesky of G + λI
	Solve      time.Duration // C = (G + λI)⁻¹ S
}

// field returns a pointer to the duration of stage st (nil if unknown).
func (s *Stages) field(st Stage) *time.Duration {
	switch st {
	case StageProjection:
		return &s.Projection
	case StageTopK:
		return &s.TopK
	case StageGram:
		return &s.Gram
	case StageGCV:
		return &s.GCV
	case StageFactor:
		return &s.Factor
	case StageSolve:
		return &s.Solve
	}
	return nil
}

// Get returns the time of stage st (0 for an unknown stage).
func (s Stages) Get(st Stage) time.Duration {
	if p := s.field(st); p != nil {
		return *p
	}
	return 0
}

// Set sets the time of stage st; an unknown stage is ignored.
func (s *Stages) Set(st Stage, d time.Duration) {
	if p := s.field(st); p != nil {
		*p = d
	}
}

// Total is the sum of the stages.
func (s Stages) Total() time.Duration {
	var t time.Duration
	for _, st := range AllStages() {
		t += s.Get(st)
	}
	return t
}

// Add accumulates o into s.
func (s *Stages) Add(o Stages) {
	for _, st := range AllStages() {
		s.Set(st, s.Get(st)+o.Get(st))
	}
}

// Scale returns s with every stage multiplied by f (e.g. 1/n for a mean).
func (s Stages) Scale(f float64) Stages {
	var out Stages
	for _, st := range AllStages() {
		out.Set(st, time.Duration(math.Round(float64(s.Get(st))*f)))
	}
	return out
}

// MarshalJSON writes the stages as seconds by name, in pipeline order.
func (s Stages) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, st := range AllStages() {
		if i > 0 {
			b.WriteByte(',')
		}
		v, _ := json.Marshal(s.Get(st).Seconds())
		fmt.Fprintf(&b, "%q:%s", st.String(), v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// UnmarshalJSON reads seconds by stage name; a missing stage is 0 and an
// unknown name is an error.
func (s *Stages) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("flycl: stage times: %w", err)
	}
	*s = Stages{}
	for name, sec := range m {
		st, err := ParseStage(name)
		if err != nil {
			return err
		}
		// ns < 2^63 (math.MaxInt64 as a float64): a time.Duration holds it
		ns := math.Round(sec * 1e9)
		if math.IsNaN(sec) || sec < 0 || !(ns < math.MaxInt64) {
			return fmt.Errorf("flycl: stage %s: %g is not a valid number of seconds", name, sec)
		}
		s.Set(st, time.Duration(ns))
	}
	return nil
}
