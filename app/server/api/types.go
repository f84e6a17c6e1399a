package api

import "encoding/json"

// RequestHeader is the header the server's web page sends with every API
// request. A browser request (one that carries Origin or Sec-Fetch-*
// headers) that may change something (any method but GET, HEAD and
// OPTIONS) is refused without it: a page of another site can send a form
// or a no-cors fetch, but not a custom header (that needs a CORS preflight,
// which the server does not grant). Clients that are not browsers need
// not send it; Client sends it anyway.
const RequestHeader = "X-Flycl-Request"

// Request is the JSON body of predict and learn: either images (base64
// of the encoded file) or feature vectors, and for learn one label per
// sample (or Label for all of them).
type Request struct {
	Images   []string    `json:"images,omitempty"`
	Features [][]float32 `json:"features,omitempty"`
	Labels   []string    `json:"labels,omitempty"`
	Label    string      `json:"label,omitempty"`
	Top      int         `json:"top,omitempty"`
	// Learn only: a fixed λ (> 0; absent: GCV), and online learning in
	// mini-batches of Batch samples (default: the server's).
	Lambda float64 `json:"lambda,omitempty"`
	Online bool    `json:"online,omitempty"`
	Batch  int     `json:"batch,omitempty"`
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// Class is a class of the model and the samples it has learned.
type Class struct {
	Name    string `json:"name"`
	Samples int    `json:"samples"`
}

// Info describes a model snapshot (GET /v1/model).
type Info struct {
	Version uint64 `json:"version"`
	Dim     int    `json:"d"`
	// M, P and K are the model's m, p and k (as in Config).
	M int `json:"m"`
	P int `json:"p"`
	K int `json:"k"`
	// Config is the model's whole configuration, flycl.Config as a model
	// file's header writes it (m, p, k, seed, topk, lambdas, gcv, ...):
	// every hyper-parameter, without this package naming them (nor
	// linking the model).
	Config   json.RawMessage `json:"config,omitempty"`
	Lambda   float64         `json:"lambda"`
	Lambdas  []float64       `json:"lambda_history"`
	Samples  int             `json:"samples"`
	Classes  int             `json:"classes"`
	Backbone string          `json:"backbone,omitempty"`
	Path     string          `json:"path,omitempty"`
	// Unknown is the rejection predictions get now (absent when the
	// model has neither a rejection nor a temperature).
	Unknown *Unknown `json:"unknown,omitempty"`
}

// Unknown is the state of the model's "unknown" answers (reject.Rule
// under the server's --unknown setting).
type Unknown struct {
	// Enabled is false when every answer is a class (rejection off, or
	// nothing to calibrate on yet).
	Enabled bool `json:"enabled"`
	// Score is the open-set score the threshold applies to ("" when off).
	Score string `json:"score,omitempty"`
	// Threshold: answers whose score is below it are "unknown".
	Threshold float64 `json:"threshold"`
	// Keep is the share of the learned classes' samples asked for (1−α);
	// 0 when the threshold was set by hand.
	Keep float64 `json:"keep,omitempty"`
	// Guaranteed is the share of new samples of the learned classes the
	// threshold keeps in expectation (split-conformal: 1 − k/(n+1)); below
	// Keep when the pool is too small for it; 0 without a guarantee.
	Guaranteed float64 `json:"guaranteed,omitempty"`
	// Samples is n, the leave-one-out scores the threshold was taken from.
	Samples int `json:"samples"`
	// Temperature T of the probabilities softmax(scores/T) (0: none).
	Temperature float64 `json:"temperature,omitempty"`
	// Summary says all of it in one line, as flycl learn prints it.
	Summary string `json:"summary"`
	// InWords says the threshold in a person's units (absent without a
	// calibration pool): "a photo is unknown when it is less typical than
	// 95% of the 15 samples it learned"; UnknownShare is that share.
	InWords      string  `json:"in_words,omitempty"`
	UnknownShare float64 `json:"unknown_share,omitempty"`
}

// ModelResponse is the body of GET /v1/model.
type ModelResponse struct {
	Info
	Images bool `json:"images"` // whether the server accepts images
	Auth   bool `json:"auth"`   // whether changes need a token
	// Inbox is whether the server keeps doubtful inputs (GET /v1/inbox
	// answers 404 when it does not, and the page does not ask).
	Inbox bool `json:"inbox"`
	// ReadOnly: the server takes no changes (flycl serve --read-only): it
	// serves the version of the model file its writer last wrote.
	ReadOnly bool `json:"read_only,omitempty"`
}

// Health is the body of GET /v1/healthz: status "ok" (200), or
// "read-only" (503) with the reason in Error when the server can no
// longer take changes but still answers predictions.
type Health struct {
	Status   string `json:"status"`
	Version  uint64 `json:"version"`
	Classes  int    `json:"classes"`
	Writable bool   `json:"writable"`
	// ReadOnly: a read-only server (flycl serve --read-only), healthy
	// (200) while it serves; Error then says why the file's latest change
	// could not be loaded, when it could not (the version served stays).
	ReadOnly bool   `json:"read_only,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ClassesResponse is the body of GET /v1/classes.
type ClassesResponse struct {
	Version uint64  `json:"version"`
	Classes []Class `json:"classes"`
}

// ForgetResponse is the body of DELETE /v1/classes/{name}.
type ForgetResponse struct {
	Version uint64 `json:"version"`
	Forgot  string `json:"forgot"`
	// Exact is true when the class's data came with the request and the
	// model now equals one that never saw the class; false when only its
	// column was dropped (G still holds its samples).
	Exact   bool    `json:"exact"`
	Samples int     `json:"samples,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Score is one class and its score.
type Score struct {
	Class string  `json:"class"`
	Score float32 `json:"score"`
}

// Prediction is the result for one sample: the best classes first.
type Prediction struct {
	Class string  `json:"class"` // the best class, even when the answer is unknown
	Top   []Score `json:"top"`
	// Answer is Class, or "unknown" when the model's rejection says the
	// sample is none of its classes (Unknown).
	Answer  string `json:"answer"`
	Unknown bool   `json:"unknown"`
	// Probability is the calibrated probability of Class (absent when
	// the model has no fitted temperature): for an "unknown" answer, that
	// of the best guess Class.
	Probability *float64 `json:"probability,omitempty"`
	// Margin is the sample's open-set score less the threshold: how far
	// below it (negative) an "unknown" answer is, or above it a known one
	// (absent when rejection is off).
	Margin *float64 `json:"unknown_margin,omitempty"`
	// MoreTypical is the share of the learned samples (the leave-one-out
	// pool the threshold was taken from) more typical than this sample:
	// 0.97 reads "less typical than 97% of the photos it learned"; the
	// sample is unknown when it reaches the model's Unknown.UnknownShare
	// (absent without a pool, or under a threshold of another score).
	MoreTypical *float64 `json:"more_typical_share,omitempty"`
}

// PredictResponse is the body of POST /v1/predict.
type PredictResponse struct {
	Version     uint64       `json:"version"`
	Predictions []Prediction `json:"predictions"`
	Seconds     float64      `json:"seconds"`
	Extract     float64      `json:"extract_seconds,omitempty"`
}

// LearnResponse is the body of POST /v1/learn.
type LearnResponse struct {
	Version    uint64             `json:"version"`
	Samples    int                `json:"samples"`
	NewClasses []string           `json:"new_classes"`
	Classes    int                `json:"classes"`
	Lambda     float64            `json:"lambda"`
	Steps      int                `json:"steps"`   // solves: 1, or one per mini-batch online
	Seconds    float64            `json:"seconds"` // whole request
	Stages     map[string]float64 `json:"stages"`  // seconds per stage
	// LambdaRequested is the request's fixed λ (absent: GCV chose λ);
	// Lambda differs from it when the solve had to raise it.
	LambdaRequested float64 `json:"lambda_requested,omitempty"`
	// Warnings say what succeeded but not as asked (a raised λ); an
	// empty list when nothing did.
	Warnings []string `json:"warnings"`
}
