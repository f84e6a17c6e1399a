package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/server/api"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	sn := s.View()
	body := api.Health{Status: "ok", Version: sn.Version(), Classes: len(sn.Classes()), Writable: true}
	code := http.StatusOK
	// A backend that cannot take changes (its file was changed behind it)
	// still answers predictions, but is not healthy: 503, with the reason.
	if s.readOnly {
		// serving what the writer wrote: healthy, not writable; a change
		// of the file that could not be loaded is said, not an outage
		body.Writable, body.ReadOnly = false, true
		if r, ok := s.cfg.Backend.(interface{ ReloadError() error }); ok {
			if err := r.ReloadError(); err != nil {
				body.Error = err.Error()
			}
		}
	} else if h, ok := s.cfg.Backend.(interface{ Health() error }); ok {
		if err := h.Health(); err != nil {
			body.Status, body.Writable, body.Error = "read-only", false, err.Error()
			code = http.StatusServiceUnavailable
		}
	}
	writeJSON(w, code, body)
}

func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	v := s.View()
	i := v.Info()
	rej := s.rejection(v)
	typ, _ := typicality(v, rej)
	i.Unknown = unknownInfo(rej, typ)
	if s.cfg.Extractor != nil && i.Backbone == "" {
		i.Backbone = s.cfg.Extractor.Name()
	}
	writeJSON(w, http.StatusOK, ModelResponse{Info: i, Images: s.cfg.Extractor != nil, Auth: s.cfg.Token != "", Inbox: s.cfg.Inbox != nil, ReadOnly: s.readOnly})
}

func (s *Server) classes(w http.ResponseWriter, r *http.Request) {
	sn := s.View()
	writeJSON(w, http.StatusOK, ClassesResponse{Version: sn.Version(), Classes: sn.Classes()})
}

// forget removes a class: DELETE /v1/classes/{name}, optionally with the
// class's images or features in the body (JSON or multipart, as for
// learn) for an exact removal.
func (s *Server) forget(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	name := r.PathValue("name")
	if !slices.ContainsFunc(s.View().Classes(), func(c Class) bool { return c.Name == name }) {
		s.fail(w, fmt.Errorf("%w %q", ErrUnknownClass, name))
		return
	}
	// The queue place is taken once the body is read (before its images
	// go through the backbone), so slow uploads hold no place.
	in := &input{}
	if r.ContentLength > 0 || r.Header.Get("Content-Type") != "" {
		reserved := false
		var err error
		noLabels := func(in *input) error {
			if len(in.labels) > 0 {
				return errorf(http.StatusBadRequest, "forget takes no labels: the class is in the path")
			}
			if in.opt != (deploy.LearnOptions{}) || in.top != 0 {
				return errorf(http.StatusBadRequest, "forget takes no top, lambda, online or batch")
			}
			if !s.reserve() {
				return errBusy
			}
			reserved = true
			return nil
		}
		if in, err = s.readInput(r, s.View().Dim(), noLabels); err != nil {
			if reserved {
				s.release()
			}
			s.fail(w, err)
			return
		}
	} else if !s.reserve() {
		s.fail(w, errBusy)
		return
	}
	var sn ModelView
	n := in.n // the samples subtracted (0: the column dropped)
	err := s.submit(func(ctx context.Context) (ModelView, error) {
		var err error
		if fe, ok := s.cfg.Backend.(exactForgetter); ok {
			// exact from the model's journal when it holds the class
			sn, n, err = fe.ForgetExact(ctx, name, in.x)
			return sn, err
		}
		sn, err = s.cfg.Backend.Forget(ctx, name, in.x)
		return sn, err
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	s.log.Info("forgot class", "class", name, "exact", n > 0, "version", sn.Version())
	writeJSON(w, http.StatusOK, ForgetResponse{Version: sn.Version(), Forgot: name, Exact: n > 0, Samples: n, Seconds: time.Since(t).Seconds()})
}

// exactForgetter is a Backend whose forget without data can be exact (a
// FileBackend whose journal holds the class's samples): it says how many
// samples it subtracted.
type exactForgetter interface {
	ForgetExact(ctx context.Context, class string, x []float32) (ModelView, int, error)
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	sn := s.View()
	in, err := s.readInput(r, sn.Dim(), func(in *input) error {
		if len(in.labels) > 0 {
			return errorf(http.StatusBadRequest, "predict takes no labels")
		}
		if in.opt != (deploy.LearnOptions{}) {
			return errorf(http.StatusBadRequest, "predict takes no lambda, online or batch (they are learn's)")
		}
		if in.top == 0 {
			in.top = 5
		}
		if in.top < 0 || in.top > s.cfg.MaxTop {
			return errorf(http.StatusBadRequest, "top must be in [1, %d], got %d", s.cfg.MaxTop, in.top)
		}
		return nil
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	top := in.top
	scores, cos, err := s.score(r.Context(), sn, in.x)
	if err != nil {
		s.fail(w, err)
		return
	}
	for i, v := range scores {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			s.fail(w, errorf(http.StatusBadRequest, "features[%d]: features too large for this model (a score is not finite)", i/max(len(sn.Classes()), 1)))
			return
		}
	}
	resp := PredictResponse{Version: sn.Version(), Predictions: make([]Prediction, in.n), Extract: in.extract.Seconds()}
	rej, nc := s.rejection(sn), len(sn.Classes())
	typ, _ := typicality(sn, rej)
	for i, top := range sn.Rank(scores, top) {
		resp.Predictions[i] = Prediction{Class: top[0].Class, Top: top}
		s.answer(&resp.Predictions[i], rej, typ, scores[i*nc:(i+1)*nc], cosineAt(cos, i))
	}
	s.keep(sn, resp.Predictions, scores, in.x, in.raw)
	resp.Seconds = time.Since(t).Seconds()
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) learn(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	// The queue place is taken once the body is read and checked (before
	// its images go through the backbone), so slow uploads hold no place.
	reserved := false
	defer func() {
		if reserved {
			s.release()
		}
	}()
	in, err := s.readInput(r, s.View().Dim(), func(in *input) error {
		if err := checkLabels(in); err != nil {
			return err
		}
		if in.top != 0 {
			return errorf(http.StatusBadRequest, "learn takes no top (it is predict's)")
		}
		opt, err := in.opt.Check()
		if err != nil {
			return errorf(http.StatusBadRequest, "%v", err)
		}
		in.opt = opt
		in.opt.MaxBytes = s.cfg.MaxLearnBytes
		if _, ok := s.calibrating(); ok {
			if in.images == 0 {
				return errUncalibrated
			}
			in.deferred = true
		}
		if !s.reserve() {
			return errBusy
		}
		reserved = true
		return nil
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	var rep LearnReport
	var sn ModelView
	reserved = false
	err = s.submit(func(ctx context.Context) (ModelView, error) {
		var err error
		if in.deferred {
			// the first learn of an int8 server: calibrate on its images
			// (unless a learn queued before this one did), then extract
			if c, ok := s.calibrating(); ok {
				if err := s.calibrate(ctx, c, in.raw); err != nil {
					return nil, err
				}
			}
			if in.x, in.extract, err = s.imageFeatures(ctx, in.raw); err != nil {
				return nil, err
			}
		}
		rep, sn, err = s.cfg.Backend.Learn(ctx, in.x, in.labels, in.opt)
		return sn, err
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	resp := LearnResponse{Version: sn.Version(), Samples: rep.Samples, NewClasses: rep.NewClasses, Classes: len(sn.Classes()),
		Lambda: rep.Lambda, LambdaRequested: in.opt.Lambda, Warnings: rep.Warnings, Steps: rep.Steps}
	if len(resp.Warnings) == 0 && in.opt.Lambda > 0 && rep.Lambda != in.opt.Lambda {
		// a backend that does not report its raise: the λ it used tells
		resp.Warnings = []string{fmt.Sprintf("λ %g was requested, %g was used", in.opt.Lambda, rep.Lambda)}
	}
	if resp.Warnings == nil {
		resp.Warnings = []string{}
	}
	if resp.NewClasses == nil {
		resp.NewClasses = []string{}
	}
	var extract *time.Duration
	if in.images > 0 {
		extract = &in.extract
	}
	resp.Stages = s.stageSeconds(rep, extract)
	resp.Seconds = time.Since(t).Seconds()
	s.log.Info("learned", "samples", rep.Samples, "new_classes", rep.NewClasses, "lambda", rep.Lambda,
		"version", sn.Version(), "seconds", resp.Seconds)
	writeJSON(w, http.StatusOK, resp)
}
