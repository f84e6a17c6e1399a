package server

import (
	"context"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/server/api"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	sn := s.Snapshot()
	body := api.Health{Status: "ok", Version: sn.Version(), Classes: len(sn.Classes()), Writable: true}
	code := http.StatusOK
	// A backend that cannot take changes (its file was changed behind it)
	// still answers predictions, but is not healthy: 503, with the reason.
	if h, ok := s.cfg.Backend.(interface{ Health() error }); ok {
		if err := h.Health(); err != nil {
			body.Status, body.Writable, body.Error = "read-only", false, err.Error()
			code = http.StatusServiceUnavailable
		}
	}
	writeJSON(w, code, body)
}

func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	i := s.Snapshot().Info()
	if s.cfg.Extractor != nil && i.Backbone == "" {
		i.Backbone = s.cfg.Extractor.Name()
	}
	writeJSON(w, http.StatusOK, ModelResponse{Info: i, Images: s.cfg.Extractor != nil, Auth: s.cfg.Token != ""})
}

func (s *Server) classes(w http.ResponseWriter, r *http.Request) {
	sn := s.Snapshot()
	writeJSON(w, http.StatusOK, ClassesResponse{Version: sn.Version(), Classes: sn.Classes()})
}

// forget removes a class: DELETE /v1/classes/{name}, optionally with the
// class's images or features in the body (JSON or multipart, as for
// learn) for an exact removal.
func (s *Server) forget(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	name := r.PathValue("name")
	if !slices.ContainsFunc(s.Snapshot().Classes(), func(c Class) bool { return c.Name == name }) {
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
			if in.opt != (LearnOptions{}) || in.top != 0 {
				return errorf(http.StatusBadRequest, "forget takes no top, lambda, online or batch")
			}
			if !s.reserve() {
				return errBusy
			}
			reserved = true
			return nil
		}
		if in, err = s.readInput(r, s.Snapshot().Dim(), noLabels); err != nil {
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
	var sn Snapshot
	err := s.submit(func(ctx context.Context) (Snapshot, error) {
		var err error
		sn, err = s.cfg.Backend.Forget(ctx, name, in.x)
		return sn, err
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	s.log.Info("forgot class", "class", name, "exact", in.n > 0, "version", sn.Version())
	writeJSON(w, http.StatusOK, ForgetResponse{Version: sn.Version(), Forgot: name, Exact: in.n > 0, Samples: in.n, Seconds: time.Since(t).Seconds()})
}

// input is a parsed request: features (n×d) and labels.
type input struct {
	x      []float32
	n      int
	labels []string
	top    int
	opt    LearnOptions // learn's options as given (checked by the learn handler)
	images int
	// deferred: the images (raw) are extracted by the learn itself, once
	// it has calibrated the backbone on them (see Calibrator)
	deferred bool
	raw      [][]byte // the images as sent (also kept by the inbox)
	extract  time.Duration
}

// readInput parses a JSON or multipart body and turns images into
// features.
func (s *Server) readInput(r *http.Request, d int, check func(*input) error) (*input, error) {
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: want application/json or multipart/form-data", r.Header.Get("Content-Type"))
	}
	var req Request
	var raw [][]byte
	var x []float32 // JSON features, rows×d
	rows := 0
	switch ct {
	case "application/json":
		b, err := s.decodeJSON(r.Body, d)
		if err != nil {
			return nil, err
		}
		req, raw, x, rows = b.req, b.raw, b.x, b.rows
	case "multipart/form-data":
		if params["boundary"] == "" {
			return nil, errorf(http.StatusBadRequest, "multipart body without a boundary")
		}
		if raw, err = s.readMultipart(multipart.NewReader(r.Body, params["boundary"]), &req); err != nil {
			return nil, err
		}
	default:
		return nil, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: want application/json or multipart/form-data", ct)
	}
	in := &input{labels: req.Labels, top: req.Top, opt: LearnOptions{Lambda: req.Lambda, Online: req.Online, Batch: req.Batch}}
	switch {
	case len(raw) > 0 && rows > 0:
		return nil, errorf(http.StatusBadRequest, "give images or features, not both")
	case len(raw) > 0:
		in.n, in.images, in.raw = len(raw), len(raw), raw
	case rows > 0:
		// decodeJSON checked every row's length and value as it read it
		in.n, in.x = rows, x
	default:
		return nil, errorf(http.StatusBadRequest, "no input: give images (multipart field \"image\" or JSON \"images\") or JSON \"features\"")
	}
	if len(in.labels) == 1 && in.n > 1 && req.Label == "" {
		// one label for all the samples (an empty one too: checkLabels
		// names it)
		one := in.labels[0]
		in.labels = make([]string, in.n)
		for i := range in.labels {
			in.labels[i] = one
		}
	}
	if req.Label != "" {
		if len(in.labels) > 0 {
			return nil, errorf(http.StatusBadRequest, "give label or labels, not both")
		}
		in.labels = make([]string, in.n)
		for i := range in.labels {
			in.labels[i] = req.Label
		}
	}
	// Refuse a bad request before running the backbone on its images.
	if check != nil {
		if err := check(in); err != nil {
			return nil, err
		}
	}
	if len(raw) > 0 {
		if in.deferred {
			// sizes are checked now, before the request takes its place
			if _, err := s.checkImages(raw); err != nil {
				return nil, err
			}
			in.raw = raw
			return in, nil
		}
		if in.x, in.extract, err = s.imageFeatures(r.Context(), raw); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// readMultipart reads the parts: files (field image, or any part with a
// file name), label/labels and top.
func (s *Server) readMultipart(mr *multipart.Reader, req *Request) ([][]byte, error) {
	var raw [][]byte
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return raw, nil
		}
		if err != nil {
			if be := bodyError(err); be != nil {
				return nil, be
			}
			return nil, errorf(http.StatusBadRequest, "malformed multipart body: %v", err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			if be := bodyError(err); be != nil {
				return nil, be
			}
			return nil, errorf(http.StatusBadRequest, "malformed multipart body: part %q: %v", p.FormName(), err)
		}
		switch name := p.FormName(); {
		case name == "image" || name == "images" || p.FileName() != "":
			if len(raw) == s.cfg.MaxImages {
				return nil, errorf(http.StatusRequestEntityTooLarge, "more than %d images in one request", s.cfg.MaxImages)
			}
			raw = append(raw, b)
		case name == "label" || name == "labels":
			if !utf8.Valid(b) {
				return nil, errorf(http.StatusBadRequest, "label is not UTF-8")
			}
			req.Labels = append(req.Labels, string(b))
		case name == "top" || name == "batch":
			v, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "%s %q is not an integer", name, b)
			}
			if name == "top" {
				req.Top = v
			} else {
				req.Batch = v
			}
		case name == "lambda":
			v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "lambda %q is not a number", b)
			}
			req.Lambda = v
		case name == "online":
			v, err := strconv.ParseBool(strings.TrimSpace(string(b)))
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "online %q is not true or false", b)
			}
			req.Online = v
		default:
			return nil, errorf(http.StatusBadRequest, "unknown multipart field %q (want image, label, top, lambda, online or batch)", name)
		}
	}
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	sn := s.Snapshot()
	in, err := s.readInput(r, sn.Dim(), func(in *input) error {
		if len(in.labels) > 0 {
			return errorf(http.StatusBadRequest, "predict takes no labels")
		}
		if in.opt != (LearnOptions{}) {
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
	scores, err := s.score(r.Context(), sn, in.x)
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
	for i, top := range sn.Rank(scores, top) {
		resp.Predictions[i] = Prediction{Class: top[0].Class, Top: top}
		s.answer(&resp.Predictions[i], rej, scores[i*nc:(i+1)*nc])
	}
	s.keep(sn, resp.Predictions, scores, in.x, in.raw)
	resp.Seconds = time.Since(t).Seconds()
	writeJSON(w, http.StatusOK, resp)
}

// checkLabels requires one valid class name per sample.
func checkLabels(in *input) error {
	if len(in.labels) == 0 {
		// JSON cannot tell "label": "" from no label: both are empty
		return errorf(http.StatusBadRequest, "the label is empty or missing: give \"label\" (a class name for all %d samples) or \"labels\" (one per sample)", in.n)
	}
	if len(in.labels) != in.n {
		return errorf(http.StatusBadRequest, "%d labels for %d samples: give one label per sample, or one label for all", len(in.labels), in.n)
	}
	for i, l := range in.labels {
		// The model's own rule, as for the CLI's learn; names are learned
		// in Unicode NFC.
		v, err := flycl.NormalizeClassName(l)
		if err != nil {
			return errorf(http.StatusBadRequest, "label %d: %v", i, err)
		}
		in.labels[i] = v
	}
	return nil
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
	in, err := s.readInput(r, s.Snapshot().Dim(), func(in *input) error {
		if err := checkLabels(in); err != nil {
			return err
		}
		if in.top != 0 {
			return errorf(http.StatusBadRequest, "learn takes no top (it is predict's)")
		}
		if _, err := in.opt.deploy(); err != nil {
			return errorf(http.StatusBadRequest, "%v", err)
		}
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
	var sn Snapshot
	reserved = false
	err = s.submit(func(ctx context.Context) (Snapshot, error) {
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
		Lambda: rep.Lambda, LambdaRequested: in.opt.Lambda, Warnings: rep.Warnings, Steps: rep.Steps, Stages: map[string]float64{}}
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
	if rep.Stages == nil {
		rep.Stages = map[string]time.Duration{}
	}
	if in.images > 0 {
		rep.Stages["extract"] = in.extract
	}
	for k, v := range rep.Stages {
		resp.Stages[k] = v.Seconds()
		s.met.stages.WithLabelValues(k).Observe(v.Seconds())
	}
	resp.Seconds = time.Since(t).Seconds()
	s.log.Info("learned", "samples", rep.Samples, "new_classes", rep.NewClasses, "lambda", rep.Lambda,
		"version", sn.Version(), "seconds", resp.Seconds)
	writeJSON(w, http.StatusOK, resp)
}
