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
//	GET    /v1/model/history       the model's changes, oldest first (HistoryResponse)
//	POST   /v1/model/undo          take the last learn, or every learn after a version, back out (token)
//	GET    /v1/classes             class names and sample counts
//	DELETE /v1/classes/{name}      forget a class (token)
//	POST   /v1/predict             top-N classes of images or feature vectors
//	POST   /v1/learn               learn images or feature vectors with labels (token);
//	                               lambda: a fixed λ, online + batch: mini-batches
//	GET    /v1/inbox               with Config.Inbox: the kept doubtful inputs (token)
//	GET    /v1/inbox/{id}/image    an inbox item's downscaled image (token)
//	POST   /v1/inbox/learn         learn inbox items as one class, then remove them (token)
//	POST   /v1/inbox/discard       remove inbox items (token)
//	GET    /v1/teach               "have I taught it enough?": per class, leave-one-out (TeachResponse)
//	GET    /metrics                Prometheus metrics
//	GET    /                       the web page
//
// A browser's request that may change something (any method but GET,
// HEAD and OPTIONS) is refused with 403 unless it comes from the server's
// own page: one the browser marks as cross-site or same-site
// (Sec-Fetch-Site), from another origin than its Host (Origin; net/http's
// CrossOriginProtection), or without the page's RequestHeader. Clients
// that are not browsers send none of these headers and are unaffected;
// the bearer token, when there is one, guards changes as well. Without a
// token the server answers only requests for an IP address, localhost or
// a name of Config.Hosts (DNS rebinding). JSON bodies are decoded as a
// stream, each feature vector checked against d as it is read, and the
// bytes of bodies being read, all requests together, are bounded by
// Config.MaxDecodeBytes (503 with Retry-After beyond). The pixels of the
// images being decoded and extracted, all requests together, are bounded
// by Config.DecodePixels, admitted from the images' headers before any
// pixel is decoded: large images take turns (503 with Retry-After after
// Config.DecodeWait) while a small one goes on at once.
//
// Predictions read an immutable ModelView through an atomic pointer and
// never wait for a learn. Learns and forgets run one at a time on the
// server's learner goroutine, in a queue of bounded length (503 with
// Retry-After beyond it); the Backend saves the model file durably before
// the new snapshot is published and the request acknowledged, so an
// acknowledged learn survives a crash. FileBackend learns in place (the
// learner goroutine owns the model; no copy of its m×m statistics) and
// undoes a failed learn or save by reading the model back from its file.
// An extractor that waits for its calibration (an int8 backbone of a new
// model, extract.Extractor.Int8Later) is calibrated on the images of the
// first learn. ResolveExtractor applies the rules that choose a served
// model's extractor; Access, the rules of its bearer token and of the
// addresses it may listen on without one. Options are a served model's
// options as flycl serve takes them, with their rules (Check,
// CheckReadOnly: an *OptionError names the field refused); Start opens
// what they name and listens, and Running.Serve serves it.
//
// The request and response bodies are the types of package
// github.com/flycl/flycl/app/server/api, which also holds a Go client; the
// names here (Request, PredictResponse, ...) are aliases of them.
package server
