package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Error is an error response of the server: its status and message.
type Error struct {
	Status  int    // HTTP status code
	Message string // ErrorBody.Error, or the body's text when it is not an ErrorBody
}

func (e *Error) Error() string {
	return fmt.Sprintf("api: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// maxResponse bounds the body of a response the client reads (the
// largest, a predict of many samples with many classes each, is far
// smaller).
const maxResponse = 64 << 20

// Client calls a flycl server. Its methods are safe for concurrent use.
type Client struct {
	// Base is the server's address, such as "http://127.0.0.1:8080".
	Base string
	// Token is the bearer token ("": none; a server with a token refuses
	// changes without it).
	Token string
	// HTTP sends the requests (nil: http.DefaultClient).
	HTTP *http.Client
}

// NewClient returns a client of the server at base with the bearer token
// token ("" for none).
func NewClient(base, token string) *Client {
	return &Client{Base: strings.TrimSuffix(base, "/"), Token: token}
}

// Images encodes image files' bytes as Request.Images wants them.
func Images(files ...[]byte) []string {
	out := make([]string, len(files))
	for i, b := range files {
		out[i] = base64.StdEncoding.EncodeToString(b)
	}
	return out
}

// Do sends a request with the token and RequestHeader and, for a 2xx
// answer, decodes its JSON body into out (nil: discarded); any other
// status is an *Error. body, when not nil, is sent as JSON.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	_, err := c.do(ctx, method, path, body, out)
	return err
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("api: encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, rd)
	if err != nil {
		return 0, fmt.Errorf("api: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(RequestHeader, "1")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("api: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("api: %s %s: read the response: %w", method, path, err)
	}
	if len(b) > maxResponse {
		return resp.StatusCode, fmt.Errorf("api: %s %s: response larger than %d bytes", method, path, maxResponse)
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
		var eb ErrorBody
		if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
			e.Message = eb.Error
		}
		if out != nil && resp.StatusCode == http.StatusServiceUnavailable {
			// (healthz answers its body with 503 too)
			json.Unmarshal(b, out)
		}
		return resp.StatusCode, e
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("api: %s %s: decode the response: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// Predict classifies the request's images or features (POST /v1/predict).
func (c *Client) Predict(ctx context.Context, r Request) (*PredictResponse, error) {
	var out PredictResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/predict", r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Learn learns the request's labelled images or features (POST /v1/learn).
func (c *Client) Learn(ctx context.Context, r Request) (*LearnResponse, error) {
	var out LearnResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/learn", r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Forget removes the class name (DELETE /v1/classes/{name}); data, when
// not nil, holds the class's images or features for an exact removal.
func (c *Client) Forget(ctx context.Context, name string, data *Request) (*ForgetResponse, error) {
	var out ForgetResponse
	var body any
	if data != nil {
		body = data
	}
	if err := c.Do(ctx, http.MethodDelete, "/v1/classes/"+url.PathEscape(name), body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Classes lists the model's classes (GET /v1/classes).
func (c *Client) Classes(ctx context.Context) (*ClassesResponse, error) {
	var out ClassesResponse
	if err := c.Do(ctx, http.MethodGet, "/v1/classes", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Model describes the served model (GET /v1/model).
func (c *Client) Model(ctx context.Context) (*ModelResponse, error) {
	var out ModelResponse
	if err := c.Do(ctx, http.MethodGet, "/v1/model", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Healthz asks the server's health (GET /v1/healthz). A read-only server
// answers 503: the Health (status "read-only", the reason in Error) comes
// with an *Error of status 503.
func (c *Client) Healthz(ctx context.Context) (*Health, error) {
	var out Health
	err := c.Do(ctx, http.MethodGet, "/v1/healthz", nil, &out)
	var e *Error
	if err != nil && !(errors.As(err, &e) && e.Status == http.StatusServiceUnavailable && out.Status != "") {
		return nil, err
	}
	return &out, err
}
