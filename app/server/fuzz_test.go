package server

import (
	"bytes"
	"encoding/json"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequest sends arbitrary bodies with each content type to predict
// and learn: every answer must be 200 or a 4xx JSON error (never a 5xx,
// never a panic), and the server must keep serving.
func FuzzRequest(f *testing.F) {
	png := pngOf(f, 8, 8, color.RGBA{200, 10, 10, 255}, 1)
	ct, mp := multipartBody(f, [][]byte{png}, map[string]string{"label": "red"})
	ctOpt, mpOpt := multipartBody(f, [][]byte{png}, map[string]string{"label": "red", "lambda": "0.5", "online": "true", "batch": "2"})
	feat, _ := json.Marshal(Request{Features: [][]float32{make([]float32, testDim)}, Label: "a"})
	for _, seed := range []struct {
		ct   string
		body []byte
	}{
		{"application/json", feat},
		{"application/json", []byte(`{"features": [[1,2,3]], "labels": ["x"]}`)},
		{"application/json", []byte(`{"images": ["AAAA"], "top": 3}`)},
		{"application/json", []byte(`{"features": [[1,2,3,4,5,6,7,8,9,10,11,12]], "label": "x", "lambda": 10, "online": true, "batch": 1}`)},
		{"application/json", []byte(`{"features": [[1,2,3,4,5,6,7,8,9,10,11,12]], "label": "x", "lambda": -1e308, "batch": 0}`)},
		{ct, mp},
		{ctOpt, mpOpt},
		{"multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a\"\r\n\r\n\xff\xd8\xff\r\n--x--\r\n")},
		{"text/plain", []byte("hello")},
		// the streaming JSON decoder: a row over d, stray tokens, repeated
		// and misspelt names, deep nesting
		{"application/json", []byte(`{"features": [[` + strings.Repeat("1,", 40) + `1]]}`)},
		{"application/json", []byte(`{"features": [[1,2,3,4,5,6,7,8,9,10,11,12],[1,2,3,4,5,6,7,8,9,10,11,12,13]], "label": "a"}`)},
		{"application/json", []byte(`{"label": "a", "label": "b", "features": [[1,2,3,4,5,6,7,8,9,10,11,12]]}`)},
		{"application/json", []byte(`{"features": [[[[[[[[1]]]]]]]], "top": null, "images": null}`)},
		{"application/json", []byte(`{"images": ["iVBORw0KGgo="], "labels": ["a", "b"], "Top": 1}`)},
	} {
		f.Add(seed.ct, seed.body, false)
		f.Add(seed.ct, seed.body, true)
	}
	s, err := New(Config{Backend: newFileBackend(f, f.TempDir()+"/m.flycl"), Extractor: gridExtractor{}, MaxBodyBytes: 1 << 16, MaxPixels: 4096})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	f.Fuzz(func(t *testing.T, ctype string, body []byte, learn bool) {
		path := "/v1/predict"
		if learn {
			path = "/v1/learn"
		}
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		req.Host = "127.0.0.1" // a server without a token answers to IP addresses
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			return
		}
		if rec.Code < 400 || rec.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", path, ctype, rec.Code, rec.Body.Bytes())
		}
		var e ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status != rec.Code || e.Error == "" {
			t.Fatalf("%s: error body %q", path, rec.Body.Bytes())
		}
	})
}
