package server

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/app/answer"
	"github.com/flycl/flycl/reject"
)

// Rejecter is implemented by a ModelView whose model can say that a sample
// is none of its classes, and calibrates its probabilities (the file
// backend's snapshots do). Predictions of other snapshots are never
// "unknown" and carry no probability.
type Rejecter interface {
	Rejection() reject.Rule
}

// Rejection returns the model's calibrated rejection.
func (s *fileView) Rejection() reject.Rule { return s.pred.Rejection() }

// Typicaler is implemented by a ModelView whose rejection's pool of
// leave-one-out scores it keeps (the file backend's snapshots): answers
// and GET /v1/model then say the scores in a person's units.
type Typicaler interface {
	Typicality() (reject.Typical, bool)
}

// Typicality returns the model's pool in a person's units.
func (s *fileView) Typicality() (reject.Typical, bool) { return s.typ, s.typOK }

// typicality is sn's pool when it has one and rej's score is the one the
// pool was taken with (another score's values do not compare).
func typicality(sn ModelView, rej reject.Rule) (reject.Typical, bool) {
	t, ok := sn.(Typicaler)
	r, ok2 := sn.(Rejecter)
	if !ok || !ok2 || r.Rejection().Score != rej.Score {
		return reject.Typical{}, false
	}
	return t.Typicality()
}

// CosineScorer is implemented by a ModelView that gives, with the class
// scores, the cosine of every sample's code to the nearest class sum
// (flycl.Predictor.ScoresCosines; the file backend's snapshots do): a
// rejection whose score needs it (reject.Score.NeedsCosine) reads it.
// Under such a rejection, a view that is not a CosineScorer has every
// prediction answered "unknown" (its cosine is not known).
type CosineScorer interface {
	ScoresCosines(ctx context.Context, x []float32) ([]float32, []float64, error)
}

// cosineAt returns cos[i], NaN when there are no cosines.
func cosineAt(cos []float64, i int) float64 {
	if i < len(cos) {
		return cos[i]
	}
	return math.NaN()
}

// checkUnknown checks Config.Unknown.
func checkUnknown(v string) error {
	if _, err := reject.ParseRule(v, reject.Rule{}); err != nil {
		return fmt.Errorf("server: Unknown: %w", err)
	}
	return nil
}

// rejection returns the rejection predictions of sn get under
// Config.Unknown.
func (s *Server) rejection(sn ModelView) reject.Rule {
	var cal reject.Rule
	if r, ok := sn.(Rejecter); ok {
		cal = r.Rejection()
	}
	rej, err := reject.ParseRule(s.cfg.Unknown, cal)
	if err != nil { // checked by New
		return cal
	}
	return rej
}

// answer sets p's answer, unknown flag, probability and margin from its
// row of class scores and its cosine (answer.Decide), and counts the
// answer.
func (s *Server) answer(p *Prediction, rej reject.Rule, typ reject.Typical, row []float32, cos float64) {
	d := answer.Decide(p.Class, rej, row, cos)
	d.AddTypicality(rej, typ)
	p.Answer, p.Unknown, p.Probability, p.Margin, p.MoreTypical = d.Answer, d.Unknown, d.Probability, d.Margin, d.MoreTypical
	if p.Unknown {
		s.met.answers.WithLabelValues("unknown").Inc()
	} else {
		s.met.answers.WithLabelValues("known").Inc()
	}
}

// unknownInfo is GET /v1/model's description of rej (nil when it has
// neither a rejection nor a temperature).
func unknownInfo(rej reject.Rule, typ reject.Typical) *Unknown {
	if !rej.Enabled() && rej.Keep == 0 && rej.Temperature == 0 {
		return nil
	}
	u := &Unknown{Enabled: rej.Enabled(), Score: string(rej.Score), Threshold: rej.Threshold, Keep: rej.Keep,
		Guaranteed: rej.Guaranteed(), Samples: rej.Samples, Temperature: rej.Temperature, Summary: rej.String()}
	if rej.Enabled() && typ.Samples() > 0 {
		u.UnknownShare = typ.AtLeast(rej.Threshold)
		u.InWords = "a photo is unknown when it is " + typ.Words(u.UnknownShare, "samples")
	}
	return u
}
