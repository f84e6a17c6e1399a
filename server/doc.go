// Package server serves a Fly-CL model over HTTP: predictions from images
// or feature vectors, learning of new or known classes while predictions
// continue, forgetting, model information, Prometheus metrics and a web
// page.
//
// The API is versioned under /v1 and speaks JSON (or multipart/form-data
// for image uploads); every error is a JSON ErrorBody with a 4xx or 5xx
// status:
//
//	GET    /v1/healthz             liveness and the model version
//	GET    /v1/model               model information (ModelResponse)
//	GET    /v1/classes             class names and sample counts
//	DELETE /v1/classes/{name}      forget a class (token)
//	POST   /v1/predict             top-N classes of images or feature vectors
//	POST   /v1/learn               learn images or feature vectors with labels (token);
//	                               lambda: a fixed λ, online + batch: mini-batches
//	GET    /metrics                Prometheus metrics
//	GET    /                       the web page
//
// Predictions read an immutable Snapshot through an atomic pointer and
// never wait for a learn. Learns and forgets run one at a time on the
// server's learner goroutine, in a queue of bounded length (503 with
// Retry-After beyond it); the Backend saves the model file durably before
// the new snapshot is published and the request acknowledged, so an
// acknowledged learn survives a crash. FileBackend learns in place (the
// learner goroutine owns the model; no copy of its m×m statistics) and
// undoes a failed learn or save by reading the model back from its file.
// An Extractor that is a Calibrator (an int8 backbone of a new model) is
// calibrated on the images of the first learn.
package server
