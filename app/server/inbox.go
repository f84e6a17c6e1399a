package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/internal/onejson"
)

// The labelling inbox (Config.Inbox): predictions the Config.InboxPolicy
// keeps (rejected as unknown, or least sure) are handed to a keeper
// goroutine, which decodes, downscales and stores them without delaying
// the prediction's answer; a person lists them, and learns or discards
// them through the API or the web page.

// keepQueue is how many kept predictions may wait for the keeper; more
// are dropped (counted as dropped, reason "busy"). The encoded images
// they hold are bounded too, by Config.MaxBodyBytes in all (keepBytes).
const keepQueue = 64

// maxInboxIDs bounds the IDs of one inbox learn or discard.
const maxInboxIDs = 10000

// keepReq is a prediction to keep, or (flushed set) a marker that tells
// when the requests before it are stored.
type keepReq struct {
	entry   inbox.Entry
	raw     []byte // the encoded image; nil for a feature vector
	flushed chan struct{}
}

// startKeeper starts the keeper goroutine (when there is an inbox).
func (s *Server) startKeeper() {
	s.keepDone = make(chan struct{})
	if s.cfg.Inbox == nil {
		close(s.keepDone)
		return
	}
	s.keepq = make(chan keepReq, keepQueue)
	s.inboxClaims = map[string]bool{}
	s.inboxGauges()
	go func() {
		defer close(s.keepDone)
		for r := range s.keepq {
			if r.flushed != nil {
				close(r.flushed)
				continue
			}
			s.store(r)
		}
	}()
}

// store keeps one prediction.
func (s *Server) store(r keepReq) {
	if r.raw != nil {
		defer s.keepBytes.Add(-int64(len(r.raw)))
		im, err := s.decoder().Decode(r.raw)
		if err != nil { // decoded once already for the prediction
			s.met.inboxDropped.WithLabelValues("error").Inc()
			s.log.Warn("inbox: cannot decode a kept image", "err", err)
			return
		}
		r.entry.Image = im
	}
	it, dropped, err := s.cfg.Inbox.Add(r.entry)
	s.met.inboxDropped.WithLabelValues("full").Add(float64(len(dropped)))
	if err != nil {
		s.met.inboxDropped.WithLabelValues("error").Inc()
		s.log.Warn("inbox: cannot keep a prediction", "err", err)
	} else {
		s.met.inboxKept.WithLabelValues(string(it.Why)).Inc()
		s.log.Debug("inbox: kept", "id", it.ID, "guess", it.Guess, "why", it.Why, "dropped", len(dropped))
	}
	s.inboxGauges()
}

// inboxGauges sets the inbox's gauges.
func (s *Server) inboxGauges() {
	n, b := s.cfg.Inbox.Len()
	s.met.inboxItems.Set(float64(n))
	s.met.inboxBytes.Set(float64(b))
}

// keep hands the predictions the policy keeps to the keeper. raw holds
// the request's images (nil for features); x its n×d features.
func (s *Server) keep(sn ModelView, preds []Prediction, scores []float32, x []float32, raw [][]byte) {
	if s.cfg.Inbox == nil {
		return
	}
	nc, d := len(sn.Classes()), sn.Dim()
	for i := range preds {
		p := &preds[i]
		prob := 0.0
		if p.Probability != nil {
			prob = *p.Probability
		}
		why, ok := s.cfg.InboxPolicy.Keep(p.Unknown, prob, p.Probability != nil, scores[i*nc:(i+1)*nc])
		if !ok {
			continue
		}
		top := make([]inbox.Score, len(p.Top))
		for j, t := range p.Top {
			top[j] = inbox.Score{Class: t.Class, Score: t.Score}
		}
		r := keepReq{entry: inbox.Entry{ModelVersion: sn.Version(), Guess: p.Class, Unknown: p.Unknown, Probability: p.Probability,
			Top: top, Why: why, Features: append([]float32(nil), x[i*d:(i+1)*d]...)}}
		n := int64(0)
		if raw != nil {
			r.raw, n = raw[i], int64(len(raw[i]))
			if s.keepBytes.Add(n) > s.cfg.MaxBodyBytes {
				s.keepBytes.Add(-n)
				s.met.inboxDropped.WithLabelValues("busy").Inc()
				continue
			}
		}
		s.mu.Lock()
		sent := false
		if !s.closed {
			select {
			case s.keepq <- r:
				sent = true
			default:
			}
		}
		s.mu.Unlock()
		if !sent {
			s.keepBytes.Add(-n)
			s.met.inboxDropped.WithLabelValues("busy").Inc()
		}
	}
}

// flushInbox waits until the predictions handed to the keeper so far are
// stored (for tests).
func (s *Server) flushInbox() {
	if s.cfg.Inbox == nil {
		return
	}
	done := make(chan struct{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.keepq <- keepReq{flushed: done} // blocks while the queue is full: the keeper drains it
	s.mu.Unlock()
	<-done
}

// errNoInbox answers the inbox endpoints of a server without one.
var errNoInbox = errorf(http.StatusNotFound, "this server keeps no inbox (start it with flycl serve --inbox DIR)")

// InboxItem is one item of GET /v1/inbox.
type InboxItem struct {
	inbox.Item
	// ImageURL is where its image is (absent without an image).
	ImageURL string `json:"image_url,omitempty"`
}

// InboxResponse is the body of GET /v1/inbox.
type InboxResponse struct {
	Items []InboxItem `json:"items"` // newest first
	Count int         `json:"count"`
	Bytes int64       `json:"bytes"`
}

func (s *Server) inboxList(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Inbox == nil {
		s.fail(w, errNoInbox)
		return
	}
	items := s.cfg.Inbox.List()
	s.inboxGauges() // another process (flycl watch) may have added items
	resp := InboxResponse{Items: make([]InboxItem, len(items)), Count: len(items)}
	for i, it := range items {
		resp.Items[i] = InboxItem{Item: it}
		if it.Image {
			resp.Items[i].ImageURL = "/v1/inbox/" + it.ID + "/image"
		}
		resp.Bytes += it.Bytes
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) inboxImage(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Inbox == nil {
		s.fail(w, errNoInbox)
		return
	}
	b, err := s.cfg.Inbox.Image(r.PathValue("id"))
	if errors.Is(err, inbox.ErrNotFound) {
		writeError(w, http.StatusNotFound, "%v", err)
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "private, no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}

// InboxRequest is the body of POST /v1/inbox/learn and
// /v1/inbox/discard.
type InboxRequest struct {
	IDs   []string `json:"ids"`
	Label string   `json:"label,omitempty"` // learn only: the class of all the items
}

// readInboxRequest decodes and checks an inbox request's body.
func (s *Server) readInboxRequest(r *http.Request, learn bool) (InboxRequest, error) {
	var req InboxRequest
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return req, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: want application/json", r.Header.Get("Content-Type"))
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := onejson.Decode(dec, &req); errors.Is(err, onejson.ErrTrailing) {
		return req, errorf(http.StatusBadRequest, "malformed JSON body: data after the object")
	} else if err != nil {
		if be := bodyError(err); be != nil {
			return req, be
		}
		return req, errorf(http.StatusBadRequest, "malformed JSON body: %v", err)
	}
	if len(req.IDs) == 0 {
		return req, errorf(http.StatusBadRequest, "no ids: give the IDs of inbox items (GET /v1/inbox lists them)")
	}
	if len(req.IDs) > maxInboxIDs {
		return req, errorf(http.StatusRequestEntityTooLarge, "%d ids: at most %d per request", len(req.IDs), maxInboxIDs)
	}
	seen := make(map[string]bool, len(req.IDs))
	for _, id := range req.IDs {
		if seen[id] {
			return req, errorf(http.StatusBadRequest, "id %q given twice", id)
		}
		seen[id] = true
	}
	if !learn {
		if req.Label != "" {
			return req, errorf(http.StatusBadRequest, "discard takes no label")
		}
		return req, nil
	}
	if strings.TrimSpace(req.Label) == "" {
		return req, errorf(http.StatusBadRequest, "the label is empty or missing: give \"label\", the class of the items")
	}
	v, err := flycl.NormalizeClassName(req.Label)
	if err != nil {
		return req, errorf(http.StatusBadRequest, "label: %v", err)
	}
	req.Label = v
	return req, nil
}

// claim marks ids as being learned, so that a second learn of the same
// items waits for none and learns nothing twice (409); release undoes it.
func (s *Server) claim(ids []string) (release func(), err error) {
	s.inboxMu.Lock()
	defer s.inboxMu.Unlock()
	for _, id := range ids {
		if s.inboxClaims[id] {
			return nil, errorf(http.StatusConflict, "inbox item %s is being learned by another request", id)
		}
	}
	for _, id := range ids {
		s.inboxClaims[id] = true
	}
	return func() {
		s.inboxMu.Lock()
		defer s.inboxMu.Unlock()
		for _, id := range ids {
			delete(s.inboxClaims, id)
		}
	}, nil
}

// InboxLearnResponse is the body of POST /v1/inbox/learn: the learn's
// answer, and the items removed from the inbox once it was saved.
type InboxLearnResponse struct {
	LearnResponse
	Removed []string `json:"removed"`
}

// inboxLearn learns inbox items as one class, in one learn through the
// learner queue, and removes them from the inbox once the learn is saved
// (a failed learn leaves them there).
func (s *Server) inboxLearn(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	if s.cfg.Inbox == nil {
		s.fail(w, errNoInbox)
		return
	}
	req, err := s.readInboxRequest(r, true)
	if err != nil {
		s.fail(w, err)
		return
	}
	if _, ok := s.calibrating(); ok {
		s.fail(w, errUncalibrated)
		return
	}
	release, err := s.claim(req.IDs)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer release()
	d := s.View().Dim()
	x := make([]float32, 0, len(req.IDs)*d)
	for _, id := range req.IDs {
		f, err := s.cfg.Inbox.Features(id)
		if errors.Is(err, inbox.ErrNotFound) {
			writeError(w, http.StatusNotFound, "%v", err)
			return
		}
		if err != nil {
			s.fail(w, err)
			return
		}
		if len(f) != d {
			s.fail(w, errorf(http.StatusConflict, "inbox item %s has %d features, the model wants d=%d", id, len(f), d))
			return
		}
		x = append(x, f...)
	}
	labels := make([]string, len(req.IDs))
	for i := range labels {
		labels[i] = req.Label
	}
	if !s.reserve() {
		s.fail(w, errBusy)
		return
	}
	var rep LearnReport
	var sn ModelView
	err = s.submit(func(ctx context.Context) (ModelView, error) {
		var err error
		rep, sn, err = s.cfg.Backend.Learn(ctx, x, labels, deploy.LearnOptions{MaxBytes: s.cfg.MaxLearnBytes})
		return sn, err
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	// The learn is saved: only now do the items leave the inbox.
	removed, err := s.cfg.Inbox.Remove(req.IDs...)
	s.met.inboxRemoved.WithLabelValues("learned").Add(float64(len(removed)))
	s.inboxGauges()
	if err != nil {
		s.log.Error("inbox: learned items could not be removed", "err", err)
		s.fail(w, fmt.Errorf("learned (model version %d), but the items could not be removed from the inbox: %w", sn.Version(), err))
		return
	}
	resp := InboxLearnResponse{LearnResponse: LearnResponse{Version: sn.Version(), Samples: rep.Samples, NewClasses: rep.NewClasses,
		Classes: len(sn.Classes()), Lambda: rep.Lambda, Steps: rep.Steps, Warnings: rep.Warnings}, Removed: removed}
	if resp.NewClasses == nil {
		resp.NewClasses = []string{}
	}
	if resp.Warnings == nil {
		resp.Warnings = []string{}
	}
	if resp.Removed == nil {
		resp.Removed = []string{}
	}
	resp.Stages = s.stageSeconds(rep, nil)
	resp.Seconds = time.Since(t).Seconds()
	s.log.Info("learned from the inbox", "samples", rep.Samples, "label", req.Label, "new_classes", rep.NewClasses, "version", sn.Version())
	writeJSON(w, http.StatusOK, resp)
}

// InboxDiscardResponse is the body of POST /v1/inbox/discard.
type InboxDiscardResponse struct {
	Removed []string `json:"removed"`
}

// inboxDiscard removes items without learning them. IDs no longer there
// are skipped (Removed lists those removed); an item being learned is
// refused (409).
func (s *Server) inboxDiscard(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Inbox == nil {
		s.fail(w, errNoInbox)
		return
	}
	req, err := s.readInboxRequest(r, false)
	if err != nil {
		s.fail(w, err)
		return
	}
	release, err := s.claim(req.IDs)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer release()
	removed, err := s.cfg.Inbox.Remove(req.IDs...)
	s.met.inboxRemoved.WithLabelValues("discarded").Add(float64(len(removed)))
	s.inboxGauges()
	if err != nil {
		s.fail(w, err)
		return
	}
	if removed == nil {
		removed = []string{}
	}
	writeJSON(w, http.StatusOK, InboxDiscardResponse{Removed: removed})
}
