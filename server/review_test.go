package server

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestWriteJSONNaN: a value JSON cannot encode gives a 500 with an error
// body, not the intended status with an empty body.
func TestWriteJSONNaN(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, []float32{float32(math.NaN())})
	var e ErrorBody
	if rec.Code != http.StatusInternalServerError || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Status != 500 {
		t.Fatalf("writeJSON(NaN): %d %q", rec.Code, rec.Body.Bytes())
	}
}

// TestPredictHugeFeatures: finite features so large that the scores
// overflow (3e38 summed over the projection) are the client's error: 400
// with a JSON body, never a 200 with an empty body.
func TestPredictHugeFeatures(t *testing.T) {
	_, hs, _ := testServer(t, nil)
	r := rand.New(rand.NewPCG(11, 12))
	x, y := clusters(r, []int{0, 1}, 20)
	learnFeatures(t, hs.URL, "", x, y)
	q := make([]float32, testDim)
	for i := range q {
		q[i] = 3e38
	}
	code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: [][]float32{x[0], q}}), "", nil)
	var e ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, "features[1]") || !strings.Contains(e.Error, "too large") {
		t.Fatalf("predict of 3e38 features: %d %q", code, b)
	}
}

// TestEmptyRowsAllocation: a small body of many empty feature rows is
// refused without allocating rows×d floats (before the fix, 4000 empty
// rows at d=16384 allocated 256 MiB).
func TestEmptyRowsAllocation(t *testing.T) {
	s, _, _ := testServer(t, nil)
	const rows, d = 4000, 1 << 14
	body := `{"features":[` + strings.Repeat(`[],`, rows-1) + `[]]}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req := httptest.NewRequest("POST", "/v1/predict", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	_, err := s.readInput(req, d, nil)
	runtime.ReadMemStats(&after)
	var ae *apiError
	if !errors.As(err, &ae) || ae.code != http.StatusBadRequest || !strings.Contains(ae.msg, "features[0]") {
		t.Fatalf("empty rows: %v", err)
	}
	// The body is 12 KB; its rows decode to 4000 slice headers (96 KB).
	// Allow 16 MiB for the decoder and anything else running, far below
	// the 256 MiB of rows×d.
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Fatalf("allocated %d bytes for a %d-byte body", got, len(body))
	}
}
