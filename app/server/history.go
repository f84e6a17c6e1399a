package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/internal/onejson"
)

// Undoer is a Backend that can take learns back out exactly and list its
// changes (FileBackend, with its journal).
type Undoer interface {
	// Undo takes the last learn back out (u.To nil), or every learn after
	// version *u.To (store.UndoPlan says which), on u's conditions
	// (store.Undo: an error wrapping store.ErrNotLast when they do not
	// hold, nothing undone), and returns the new snapshot and the learns
	// it took back, newest first.
	Undo(ctx context.Context, u store.Undo) (ModelView, []store.Undone, error)
	// History lists the model's changes, oldest first.
	History() ([]store.HistoryItem, error)
}

// UndoRequest is the JSON body of POST /v1/model/undo (empty or {}: undo
// the last learn).
type UndoRequest struct {
	// To, when given, undoes every learn after version To, so that the
	// model ends as it was at version To (0: as created, before its first
	// learn), as a new version; see store.UndoPlan. When the model is
	// already as it was at To, nothing is undone.
	To *uint64 `json:"to,omitempty"`
	// Version, when given, is the learn the undo must take back (the
	// last one not undone): when another change came after it, nothing
	// is undone and the answer is 409. A client that undoes its own
	// learn names it, so that it never takes back another client's.
	Version *uint64 `json:"version,omitempty"`
}

// UndoResponse answers POST /v1/model/undo.
type UndoResponse struct {
	// Version is the model's version after the undo; Classes its classes.
	Version uint64 `json:"version"`
	Classes int    `json:"classes"`
	// To is the version asked for (absent: the last learn).
	To *uint64 `json:"to,omitempty"`
	// Undone lists the learns taken back, newest first (empty: the model
	// already was as asked).
	Undone  []store.Undone `json:"undone"`
	Seconds float64        `json:"seconds"`
}

// HistoryResponse answers GET /v1/model/history.
type HistoryResponse struct {
	Version uint64              `json:"version"`
	Changes []store.HistoryItem `json:"changes"`
}

func (s *Server) undo(w http.ResponseWriter, r *http.Request) {
	t := time.Now()
	u, ok := s.cfg.Backend.(Undoer)
	if !ok {
		s.fail(w, fmt.Errorf("undo: %w", ErrUnsupported))
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxUndoBody+1))
	if err != nil {
		s.fail(w, err)
		return
	}
	req, err := parseUndoRequest(b)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	// If-Match: "N" (the model's version, as GET /v1/model reports it):
	// the undo is done only when the model is still at N
	ifMatch, err := parseIfMatch(r.Header.Get("If-Match"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if !s.reserve() {
		s.fail(w, errBusy)
		return
	}
	var sn ModelView
	var undone []store.Undone
	err = s.submit(func(ctx context.Context) (ModelView, error) {
		var err error
		sn, undone, err = u.Undo(ctx, store.Undo{To: req.To, Version: req.Version, Model: ifMatch})
		return sn, err
	})
	if errors.Is(err, store.ErrNotLast) {
		writeError(w, http.StatusConflict, "%v", err)
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	if undone == nil {
		undone = []store.Undone{}
	}
	versions := make([]uint64, len(undone))
	for i, u := range undone {
		versions[i] = u.Version
	}
	s.log.Info("undid", "to", req.To, "learns", versions, "version", sn.Version(), "classes", len(sn.Classes()))
	writeJSON(w, http.StatusOK, UndoResponse{Version: sn.Version(), Classes: len(sn.Classes()), To: req.To, Undone: undone, Seconds: time.Since(t).Seconds()})
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	u, ok := s.cfg.Backend.(Undoer)
	if !ok {
		s.fail(w, fmt.Errorf("history: %w", ErrUnsupported))
		return
	}
	h, err := u.History()
	if err != nil {
		s.fail(w, err)
		return
	}
	if h == nil {
		h = []store.HistoryItem{}
	}
	writeJSON(w, http.StatusOK, HistoryResponse{Version: s.View().Version(), Changes: h})
}

// parseIfMatch reads an If-Match header naming a model version: "N"
// (an entity tag), W/"N" or N; empty or * is no condition.
func parseIfMatch(h string) (*uint64, error) {
	h = strings.TrimSpace(h)
	if h == "" || h == "*" {
		return nil, nil
	}
	t := strings.Trim(strings.TrimPrefix(h, "W/"), `"`)
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("undo: If-Match %q: want the model's version, as \"N\"", h)
	}
	return &v, nil
}

// maxUndoBody bounds an undo request's body.
const maxUndoBody = 4096

// parseUndoRequest reads the body of POST /v1/model/undo: empty, {}, or
// {"to": VERSION}; anything else (other fields, trailing data, more than
// maxUndoBody bytes) is an error that says what is wanted.
func parseUndoRequest(b []byte) (UndoRequest, error) {
	var req UndoRequest
	if len(b) > maxUndoBody {
		return req, fmt.Errorf("undo: body of more than %d bytes (want {}, {\"to\": VERSION} or {\"version\": VERSION})", maxUndoBody)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return req, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := onejson.Decode(dec, &req); errors.Is(err, onejson.ErrTrailing) {
		return UndoRequest{}, fmt.Errorf("undo: body: data after the JSON object (want {}, {\"to\": VERSION} or {\"version\": VERSION})")
	} else if err != nil {
		return UndoRequest{}, fmt.Errorf("undo: body: %v (want {}, {\"to\": VERSION} or {\"version\": VERSION})", err)
	}
	return req, nil
}

// Both backends undo (the read-only one refuses, naming why).
var (
	_ Undoer = (*FileBackend)(nil)
	_ Undoer = (*ReadOnlyBackend)(nil)
)
