package server

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
)

// input is a parsed request: features (n×d) and labels.
type input struct {
	x      []float32
	n      int
	labels []string
	top    int
	opt    deploy.LearnOptions // learn's options as given (checked by the learn handler)
	images int
	// deferred: the images (raw) are extracted by the learn itself, once
	// it has calibrated the backbone on them (see calibrator)
	deferred bool
	raw      [][]byte // the images as sent (also kept by the inbox)
	extract  time.Duration
}

// readInput parses a JSON or multipart body and turns images into
// features.
func (s *Server) readInput(r *http.Request, d int, check func(*input) error) (*input, error) {
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: want application/json or multipart/form-data", r.Header.Get("Content-Type"))
	}
	var req Request
	var raw [][]byte
	var x []float32 // JSON features, rows×d
	rows := 0
	switch ct {
	case "application/json":
		b, err := s.decodeJSON(r.Body, d)
		if err != nil {
			return nil, err
		}
		req, raw, x, rows = b.req, b.raw, b.x, b.rows
	case "multipart/form-data":
		if params["boundary"] == "" {
			return nil, errorf(http.StatusBadRequest, "multipart body without a boundary")
		}
		if raw, err = s.readMultipart(multipart.NewReader(r.Body, params["boundary"]), &req); err != nil {
			return nil, err
		}
	default:
		return nil, errorf(http.StatusUnsupportedMediaType, "Content-Type %q: want application/json or multipart/form-data", ct)
	}
	in := &input{labels: req.Labels, top: req.Top, opt: deploy.LearnOptions{Lambda: req.Lambda, Online: req.Online, Batch: req.Batch}}
	switch {
	case len(raw) > 0 && rows > 0:
		return nil, errorf(http.StatusBadRequest, "give images or features, not both")
	case len(raw) > 0:
		in.n, in.images, in.raw = len(raw), len(raw), raw
	case rows > 0:
		// decodeJSON checked every row's length and value as it read it
		in.n, in.x = rows, x
	default:
		return nil, errorf(http.StatusBadRequest, "no input: give images (multipart field \"image\" or JSON \"images\") or JSON \"features\"")
	}
	if len(in.labels) == 1 && in.n > 1 && req.Label == "" {
		// one label for all the samples (an empty one too: checkLabels
		// names it)
		one := in.labels[0]
		in.labels = make([]string, in.n)
		for i := range in.labels {
			in.labels[i] = one
		}
	}
	if req.Label != "" {
		if len(in.labels) > 0 {
			return nil, errorf(http.StatusBadRequest, "give label or labels, not both")
		}
		in.labels = make([]string, in.n)
		for i := range in.labels {
			in.labels[i] = req.Label
		}
	}
	// Refuse a bad request before running the backbone on its images.
	if check != nil {
		if err := check(in); err != nil {
			return nil, err
		}
	}
	if len(raw) > 0 {
		if in.deferred {
			// sizes are checked now, before the request takes its place
			if _, err := s.checkImages(raw); err != nil {
				return nil, err
			}
			in.raw = raw
			return in, nil
		}
		if in.x, in.extract, err = s.imageFeatures(r.Context(), raw); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// readMultipart reads the parts: files (field image, or any part with a
// file name), label/labels and top.
func (s *Server) readMultipart(mr *multipart.Reader, req *Request) ([][]byte, error) {
	var raw [][]byte
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return raw, nil
		}
		if err != nil {
			if be := bodyError(err); be != nil {
				return nil, be
			}
			return nil, errorf(http.StatusBadRequest, "malformed multipart body: %v", err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			if be := bodyError(err); be != nil {
				return nil, be
			}
			return nil, errorf(http.StatusBadRequest, "malformed multipart body: part %q: %v", p.FormName(), err)
		}
		switch name := p.FormName(); {
		case name == "image" || name == "images" || p.FileName() != "":
			if len(raw) == s.cfg.MaxImages {
				return nil, errorf(http.StatusRequestEntityTooLarge, "more than %d images in one request", s.cfg.MaxImages)
			}
			raw = append(raw, b)
		case name == "label" || name == "labels":
			if !utf8.Valid(b) {
				return nil, errorf(http.StatusBadRequest, "label is not UTF-8")
			}
			req.Labels = append(req.Labels, string(b))
		case name == "top" || name == "batch":
			v, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "%s %q is not an integer", name, b)
			}
			if name == "top" {
				req.Top = v
			} else {
				req.Batch = v
			}
		case name == "lambda":
			v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "lambda %q is not a number", b)
			}
			req.Lambda = v
		case name == "online":
			v, err := strconv.ParseBool(strings.TrimSpace(string(b)))
			if err != nil {
				return nil, errorf(http.StatusBadRequest, "online %q is not true or false", b)
			}
			req.Online = v
		default:
			return nil, errorf(http.StatusBadRequest, "unknown multipart field %q (want image, label, top, lambda, online or batch)", name)
		}
	}
}

// checkLabels requires one valid class name per sample.
func checkLabels(in *input) error {
	if len(in.labels) == 0 {
		// JSON cannot tell "label": "" from no label: both are empty
		return errorf(http.StatusBadRequest, "the label is empty or missing: give \"label\" (a class name for all %d samples) or \"labels\" (one per sample)", in.n)
	}
	if len(in.labels) != in.n {
		return errorf(http.StatusBadRequest, "%d labels for %d samples: give one label per sample, or one label for all", len(in.labels), in.n)
	}
	for i, l := range in.labels {
		// The model's own rule, as for the CLI's learn; names are learned
		// in Unicode NFC.
		v, err := flycl.NormalizeClassName(l)
		if err != nil {
			return errorf(http.StatusBadRequest, "label %d: %v", i, err)
		}
		in.labels[i] = v
	}
	return nil
}
