package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/imageio"
)

// apiError is an error with the HTTP status it maps to.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func errorf(code int, format string, a ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, a...)}
}

// writeJSON marshals v before sending the status, so that a value JSON
// cannot hold (a NaN) gives a 500 with an error body, never a 200 with an
// empty or truncated one.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: fmt.Sprintf("encode response: %v", err), Status: code})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, code int, format string, a ...any) {
	writeJSON(w, code, ErrorBody{Error: fmt.Sprintf(format, a...), Status: code})
}

// fail maps an error to its response.
func (s *Server) fail(w http.ResponseWriter, err error) {
	var ae *apiError
	var mbe *http.MaxBytesError
	var ie *InputError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae.code, "%s", ae.msg)
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "request body is larger than the limit of %d bytes", mbe.Limit)
	case errors.As(err, new(*flycl.MemoryError)):
		writeError(w, http.StatusRequestEntityTooLarge, "%v (the server's --max-learn-bytes)", err)
	case errors.Is(err, ErrReadOnly):
		writeError(w, http.StatusMethodNotAllowed, "%v", err)
	case errors.Is(err, ErrFileChanged), errors.Is(err, modelfile.ErrLockLost), errors.Is(err, modelfile.ErrJournalChanged):
		// no Retry-After: only a restart of the server helps (its lock
		// file or journal removed or changed: read-only for good)
		s.log.Error("change refused: the model file, its lock or its journal was changed behind the server", "err", err)
		writeError(w, http.StatusServiceUnavailable, "%v", err)
	case errors.Is(err, errBusy), errors.Is(err, errShutdown), errors.As(err, new(*BudgetError)), errors.Is(err, imageio.ErrBudget):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "%v", err)
	case errors.Is(err, ErrUnknownClass):
		writeError(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, ErrNotTrained):
		writeError(w, http.StatusConflict, "%v", err)
	case errors.Is(err, ErrUnsupported):
		writeError(w, http.StatusNotImplemented, "%v", err)
	case errors.As(err, &ie):
		writeError(w, http.StatusBadRequest, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusServiceUnavailable, "request cancelled: %v", err)
	default:
		s.log.Error("request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "%v", err)
	}
}

// stageSeconds returns the wire form of a learn's times
// (LearnResponse.Stages: seconds by name: every flycl.Stage, "save" and,
// when the request's images were extracted, "extract") and observes each
// in the stage histogram.
func (s *Server) stageSeconds(rep LearnReport, extract *time.Duration) map[string]float64 {
	out := map[string]float64{}
	add := func(name string, d time.Duration) {
		out[name] = d.Seconds()
		s.met.stages.WithLabelValues(name).Observe(d.Seconds())
	}
	for _, st := range flycl.AllStages() {
		add(st.String(), rep.Stages.Get(st))
	}
	add("save", rep.Save)
	if extract != nil {
		add("extract", *extract)
	}
	return out
}
