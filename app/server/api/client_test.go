package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/server"
	"github.com/flycl/flycl/app/server/api"
)

// serve starts a server over a new 4-dimensional model file with token
// ("" for none) on 127.0.0.1 and returns its address.
func serve(t *testing.T, token string) string {
	t.Helper()
	backend, err := server.OpenFile(filepath.Join(t.TempDir(), "m.flycl"), func() (*flycl.Model, error) {
		return flycl.New(flycl.Config{M: 200, P: 2, K: 50, Lambdas: []float64{0.1, 1, 10}}, 4)
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Backend: backend, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs.URL
}

// TestClient runs every call of the client against a real server: what
// it learns is what Classes, Model and Predict then report, Forget
// removes the class, and the server's refusals come back as *Error with
// the status the server documents.
func TestClient(t *testing.T) {
	ctx := context.Background()
	const token = "s3cret"
	c := api.NewClient(serve(t, token), token)
	learned, err := c.Learn(ctx, api.Request{
		Features: [][]float32{{1, 0, 0, 0}, {0.9, 0.1, 0, 0}, {0, 0, 1, 0}, {0, 0.1, 0.9, 0}, {0, 0, 0.8, 0.2}},
		Labels:   []string{"forklift", "forklift", "pallet", "pallet", "pallet"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if learned.Version != 1 || learned.Samples != 5 || learned.Classes != 2 || len(learned.NewClasses) != 2 {
		t.Fatalf("learn: %+v", learned)
	}
	cl, err := c.Classes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"forklift": 2, "pallet": 3}
	if cl.Version != 1 || len(cl.Classes) != 2 || cl.Classes[0].Samples != want[cl.Classes[0].Name] || cl.Classes[1].Samples != want[cl.Classes[1].Name] {
		t.Fatalf("classes: %+v, want %v", cl, want)
	}
	m, err := c.Model(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || m.Dim != 4 || m.Classes != 2 || m.Samples != 5 || !m.Auth || m.Images {
		t.Fatalf("model: %+v", m)
	}
	pred, err := c.Predict(ctx, api.Request{Features: [][]float32{{0.95, 0.05, 0, 0}, {0, 0, 0.9, 0.1}}, Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(pred.Predictions) != 2 || pred.Predictions[0].Class != "forklift" || pred.Predictions[1].Class != "pallet" || len(pred.Predictions[0].Top) != 2 {
		t.Fatalf("predict: %+v", pred)
	}
	h, err := c.Healthz(ctx)
	if err != nil || h.Status != "ok" || !h.Writable || h.Version != 1 || h.Classes != 2 {
		t.Fatalf("healthz: %+v, %v", h, err)
	}
	f, err := c.Forget(ctx, "pallet", nil)
	if err != nil || f.Forgot != "pallet" || f.Exact || f.Version != 2 {
		t.Fatalf("forget: %+v, %v", f, err)
	}
	if cl, err = c.Classes(ctx); err != nil || len(cl.Classes) != 1 || cl.Classes[0].Name != "forklift" {
		t.Fatalf("classes after forget: %+v, %v", cl, err)
	}

	for _, tc := range []struct {
		name   string
		call   func() error
		status int
	}{
		{"learn without a token", func() error {
			_, err := api.NewClient(c.Base, "").Learn(ctx, api.Request{Features: [][]float32{{1, 0, 0, 0}}, Label: "x"})
			return err
		}, http.StatusUnauthorized},
		{"learn with a wrong token", func() error {
			_, err := api.NewClient(c.Base, "wrong").Learn(ctx, api.Request{Features: [][]float32{{1, 0, 0, 0}}, Label: "x"})
			return err
		}, http.StatusForbidden},
		{"predict of the wrong dimension", func() error {
			_, err := c.Predict(ctx, api.Request{Features: [][]float32{{1, 0}}})
			return err
		}, http.StatusBadRequest},
		{"forget of an unknown class", func() error { _, err := c.Forget(ctx, "no such/class", nil); return err }, http.StatusNotFound},
	} {
		err := tc.call()
		var e *api.Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Message == "" {
			t.Errorf("%s: %v, want an *api.Error of status %d with the server's message", tc.name, err, tc.status)
		}
	}
}

// TestClientHeaders: every request carries the bearer token and
// RequestHeader, and a JSON body its content type.
func TestClientHeaders(t *testing.T) {
	var got []http.Header
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		w.Write([]byte(`{}`))
	}))
	defer hs.Close()
	c := api.NewClient(hs.URL, "tok")
	ctx := context.Background()
	c.Learn(ctx, api.Request{Label: "a"})
	c.Classes(ctx)
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	for i, h := range got {
		if h.Get("Authorization") != "Bearer tok" || h.Get(api.RequestHeader) == "" {
			t.Errorf("request %d: headers %v", i, h)
		}
	}
	if got[0].Get("Content-Type") != "application/json" || got[1].Get("Content-Type") != "" {
		t.Errorf("content types %q, %q", got[0].Get("Content-Type"), got[1].Get("Content-Type"))
	}
}

// TestInfoConfig: the model's information carries its whole
// configuration, flycl.Config as the model has it, field by field (so a
// field added to flycl.Config reaches clients with no change to Info).
func TestInfoConfig(t *testing.T) {
	m, err := api.NewClient(serve(t, ""), "").Model(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got flycl.Config
	if err := json.Unmarshal(m.Config, &got); err != nil {
		t.Fatalf("config %s: %v", m.Config, err)
	}
	want := flycl.Config{M: 200, P: 2, K: 50, Lambdas: []float64{0.1, 1, 10}} // serve's
	if !reflect.DeepEqual(got, want) || m.M != want.M || m.P != want.P || m.K != want.K {
		t.Errorf("info m=%d p=%d k=%d config %+v, want %+v", m.M, m.P, m.K, got, want)
	}
	var fields map[string]any
	json.Unmarshal(m.Config, &fields)
	wantJSON, _ := json.Marshal(want)
	var wantFields map[string]any
	json.Unmarshal(wantJSON, &wantFields)
	if !reflect.DeepEqual(fields, wantFields) {
		t.Errorf("config keys %v, want flycl.Config's %v", fields, wantFields)
	}
}
