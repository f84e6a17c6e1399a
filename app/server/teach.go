package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/teach"
)

// Teacher is a Backend that reports how well its classes are taught
// (FileBackend: from its journal's samples, package teach). The server
// calls Teach from its learner goroutine, as Learn: the report may factor
// the model's statistics.
type Teacher interface {
	Teach(ctx context.Context, opt teach.Options) (*teach.Report, error)
}

// Teach implements Teacher from the journal's history.
func (b *FileBackend) Teach(ctx context.Context, opt teach.Options) (*teach.Report, error) {
	hist, err := b.st.History()
	if err != nil {
		return nil, err
	}
	var rep *teach.Report
	err = b.st.Hold(func(m *deploy.Model) error {
		if m == nil {
			return fmt.Errorf("the model could not be read back from %s after a failed change", b.path)
		}
		rep, err = teach.Compute(ctx, m, hist, opt) // it may factor G + λI: the lock held alone
		return err
	})
	return rep, err
}

// TeachResponse is the body of GET /v1/teach: "have I taught it
// enough?" (teach.Report), and the seconds it took (0 when the report of
// this version was at hand).
type TeachResponse struct {
	*teach.Report
	Seconds float64 `json:"seconds"`
}

// maxTeachHardest bounds GET /v1/teach?hardest=N.
const maxTeachHardest = 1000

// teachReport answers GET /v1/teach[?hardest=N]: computed through the
// learner queue (a learn's turn), and kept for the model's version.
func (s *Server) teachReport(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	tb, ok := s.cfg.Backend.(Teacher)
	if !ok {
		s.fail(w, fmt.Errorf("teach report: %w", ErrUnsupported))
		return
	}
	opt := teach.Options{}
	if v := r.URL.Query().Get("hardest"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTeachHardest {
			s.fail(w, errorf(http.StatusBadRequest, "hardest=%q: want a number from 1 to %d", v, maxTeachHardest))
			return
		}
		opt.Hardest = n
	}
	if len(s.View().Classes()) == 0 {
		s.fail(w, ErrNotTrained)
		return
	}
	s.teachMu.Lock()
	last := s.teachLast
	s.teachMu.Unlock()
	if last != nil && last.Version == s.View().Version() && len(last.Hardest) >= min(cmpOrInt(opt.Hardest, teach.DefaultHardest), last.Samples) {
		rep := *last
		rep.Hardest = rep.Hardest[:min(len(rep.Hardest), cmpOrInt(opt.Hardest, teach.DefaultHardest))]
		writeJSON(w, http.StatusOK, TeachResponse{Report: &rep})
		return
	}
	if !s.reserve() {
		s.fail(w, errBusy)
		return
	}
	var rep *teach.Report
	err := s.submit(func(ctx context.Context) (ModelView, error) {
		var err error
		rep, err = tb.Teach(ctx, opt)
		return nil, err
	})
	if errors.Is(err, teach.ErrNoSamples) {
		err = errorf(http.StatusConflict, "%v", err)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	s.teachMu.Lock()
	s.teachLast = rep
	s.teachMu.Unlock()
	writeJSON(w, http.StatusOK, TeachResponse{Report: rep, Seconds: time.Since(t).Seconds()})
}

func cmpOrInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
