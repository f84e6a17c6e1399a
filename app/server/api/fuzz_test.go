package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/server/api"
)

// answer is a server whose every answer is the fuzzer's status and body.
type answer struct {
	status int
	body   []byte
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

// FuzzResponse gives the client any status and body as a server's
// answer: nothing panics; a 2xx answer decodes as encoding/json decodes
// it into the call's type, or is refused naming the method and path; any
// other status is an *Error of that status whose message is the
// ErrorBody's error, or else the body's text; a 503 health answer with a
// status is returned with its *Error (a read-only server).
func FuzzResponse(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"classes":[{"name":"cat","samples":3},{"name":"dog","samples":2}],"version":4}`},
		{200, `{"status":"ok","version":4,"classes":2,"writable":true}`},
		{200, `{"predictions":[{"class":"cat","score":0.9}]}`},
		{200, ``},
		{200, `{"classes":[`},
		{200, `[1,2,3]`},
		{200, `{"version":-1}`},
		{204, ``},
		{400, `{"error":"images[0]: not an image","status":400}`},
		{401, `{"error":"","status":401}`},
		{404, "404 page not found\n"},
		{503, `{"status":"read-only","version":3,"classes":2,"read_only":true,"error":"m.flycl: changed"}`},
		{503, `not json`},
		{302, ``},
		{0, `{}`},
	} {
		f.Add(uint16(s.status), []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status uint16, body []byte) {
		c := &api.Client{Base: "http://flycl.test", HTTP: &http.Client{Transport: answer{int(status), body}}}
		ctx := context.Background()
		st := int(status)
		checkErr := func(err error, path string, decodes bool) {
			t.Helper()
			var e *api.Error
			switch {
			case st/100 != 2:
				if !errors.As(err, &e) || e.Status != st {
					t.Fatalf("status %d: %v, want an *api.Error of that status", st, err)
				}
				var eb api.ErrorBody
				want := strings.TrimSpace(string(body))
				if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
					want = eb.Error
				}
				if e.Message != want {
					t.Fatalf("status %d: message %q, want %q", st, e.Message, want)
				}
			case decodes:
				if err != nil {
					t.Fatalf("status %d, a body encoding/json decodes: %v", st, err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "decode the response") {
					t.Fatalf("status %d, a body encoding/json refuses: %v, want an error naming %s", st, err, path)
				}
			}
		}

		var wantClasses api.ClassesResponse
		classesOK := json.Unmarshal(body, &wantClasses) == nil
		got, err := c.Classes(ctx)
		checkErr(err, "GET /v1/classes", classesOK)
		if err == nil && !reflect.DeepEqual(*got, wantClasses) {
			t.Fatalf("classes %+v, want %+v", *got, wantClasses)
		}

		var wantHealth api.Health
		healthOK := json.Unmarshal(body, &wantHealth) == nil
		h, err := c.Healthz(ctx)
		checkErr(err, "GET /v1/healthz", healthOK)
		switch {
		case st == http.StatusServiceUnavailable && healthOK && wantHealth.Status != "":
			if h == nil || !reflect.DeepEqual(*h, wantHealth) {
				t.Fatalf("503 health %+v, want %+v", h, wantHealth)
			}
		case err != nil:
			if h != nil {
				t.Fatalf("status %d: health %+v with error %v", st, *h, err)
			}
		}

		var wantPredict api.PredictResponse
		predictOK := json.Unmarshal(body, &wantPredict) == nil
		p, err := c.Predict(ctx, api.Request{Features: [][]float32{{1, 2}}})
		checkErr(err, "POST /v1/predict", predictOK)
		if err == nil && !reflect.DeepEqual(*p, wantPredict) {
			t.Fatalf("predict %+v, want %+v", *p, wantPredict)
		}
	})
}
