package server

import (
	"fmt"

	"github.com/flycl/flycl"
)

// Rejecter is implemented by a ModelView whose model can say that a sample
// is none of its classes, and calibrates its probabilities (the file
// backend's snapshots do). Predictions of other snapshots are never
// "unknown" and carry no probability.
type Rejecter interface {
	Rejection() flycl.Rejection
}

// Rejection returns the model's calibrated rejection.
func (s *fileView) Rejection() flycl.Rejection { return s.pred.Rejection() }

// unknownAnswer is a prediction's answer when it is rejected.
const unknownAnswer = "unknown"

// checkUnknown checks Config.Unknown.
func checkUnknown(v string) error {
	if _, err := flycl.ParseRejection(v, flycl.Rejection{}); err != nil {
		return fmt.Errorf("server: Unknown: %w", err)
	}
	return nil
}

// rejection returns the rejection predictions of sn get under
// Config.Unknown.
func (s *Server) rejection(sn ModelView) flycl.Rejection {
	var cal flycl.Rejection
	if r, ok := sn.(Rejecter); ok {
		cal = r.Rejection()
	}
	rej, err := flycl.ParseRejection(s.cfg.Unknown, cal)
	if err != nil { // checked by New
		return cal
	}
	return rej
}

// answer sets p's answer, unknown flag and probability from its row of
// class scores, and counts the answer.
func (s *Server) answer(p *Prediction, rej flycl.Rejection, row []float32) {
	p.Answer = p.Class
	if rej.Reject(row) {
		p.Answer, p.Unknown = unknownAnswer, true
		s.met.answers.WithLabelValues("unknown").Inc()
	} else {
		s.met.answers.WithLabelValues("known").Inc()
	}
	if pr, ok := rej.Probability(row); ok {
		p.Probability = &pr
	}
}
