package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/flycl/flycl/deploy"
)

// Undoer is a Backend that can take learns back out exactly and list its
// changes (FileBackend, with its journal).
type Undoer interface {
	// Undo takes the last learn back out (to 0), or every learn after
	// version to, and returns the new snapshot.
	Undo(ctx context.Context, to uint64) (ModelView, error)
	// History lists the model's changes, oldest first.
	History() ([]deploy.HistoryItem, error)
}

// UndoRequest is the JSON body of POST /v1/model/undo (empty: undo the
// last learn).
type UndoRequest struct {
	// To, when not 0, undoes every learn after version To.
	To uint64 `json:"to,omitempty"`
}

// UndoResponse answers POST /v1/model/undo.
type UndoResponse struct {
	Version uint64  `json:"version"`
	Classes int     `json:"classes"`
	Seconds float64 `json:"seconds"`
	// Undone lists the learns taken back, newest first, as the history
	// lists them (empty: the model already was as asked).
	Undone []deploy.HistoryItem `json:"undone"`
}

// HistoryResponse answers GET /v1/model/history.
type HistoryResponse struct {
	Version uint64               `json:"version"`
	Changes []deploy.HistoryItem `json:"changes"`
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
	if !s.reserve() {
		s.fail(w, errBusy)
		return
	}
	var sn ModelView
	var undone []deploy.HistoryItem
	err = s.submit(func(ctx context.Context) (ModelView, error) {
		// changes run one at a time here: the versions after before are
		// this undo's
		before := s.View().Version()
		var err error
		if sn, err = u.Undo(ctx, req.To); err != nil {
			return sn, err
		}
		if h, herr := u.History(); herr == nil {
			undone = undoneBy(h, before)
		} else {
			s.log.Warn("undo: cannot list what it took back", "err", herr)
		}
		return sn, nil
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	if undone == nil {
		undone = []deploy.HistoryItem{}
	}
	s.log.Info("undid", "to", req.To, "version", sn.Version(), "classes", len(sn.Classes()), "learns", len(undone))
	writeJSON(w, http.StatusOK, UndoResponse{Version: sn.Version(), Classes: len(sn.Classes()), Seconds: time.Since(t).Seconds(), Undone: undone})
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
		h = []deploy.HistoryItem{}
	}
	writeJSON(w, http.StatusOK, HistoryResponse{Version: s.View().Version(), Changes: h})
}

// undoneBy returns the learns of history that its undos after version
// before took back, newest first (the order they were undone in).
func undoneBy(h []deploy.HistoryItem, before uint64) []deploy.HistoryItem {
	byVersion := make(map[uint64]deploy.HistoryItem, len(h))
	for _, it := range h {
		byVersion[it.Version] = it
	}
	var out []deploy.HistoryItem
	for _, it := range h {
		if it.Version > before && it.Op == "undo" {
			if l, ok := byVersion[it.Undoes]; ok {
				out = append(out, l)
			}
		}
	}
	return out
}

// maxUndoBody bounds an undo request's body.
const maxUndoBody = 4096

// parseUndoRequest reads the body of POST /v1/model/undo: empty, {}, or
// {"to": VERSION}; anything else (other fields, trailing data, more than
// maxUndoBody bytes) is an error that says what is wanted.
func parseUndoRequest(b []byte) (UndoRequest, error) {
	var req UndoRequest
	if len(b) > maxUndoBody {
		return req, fmt.Errorf("undo: body of more than %d bytes (want {} or {\"to\": VERSION})", maxUndoBody)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return req, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return UndoRequest{}, fmt.Errorf("undo: body: %v (want {} or {\"to\": VERSION})", err)
	}
	if rest := b[dec.InputOffset():]; len(bytes.TrimSpace(rest)) > 0 {
		return UndoRequest{}, fmt.Errorf("undo: body: data after the JSON object (want {} or {\"to\": VERSION})")
	}
	return req, nil
}
