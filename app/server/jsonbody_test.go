package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/procmem"
)

// referenceDecode is how the body was read before the streaming decoder,
// and the truth it is checked against: encoding/json decodes the whole
// document into a Request (unknown fields refused), then the rows are
// checked against d and the images decoded from base64.
func referenceDecode(body []byte, d int) (*decodedJSON, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	b := &decodedJSON{req: req, rows: len(req.Features)}
	for i, f := range req.Features {
		if len(f) != d {
			return nil, fmt.Errorf("features[%d] has %d values", i, len(f))
		}
		b.x = append(b.x, f...)
	}
	for i, s := range req.Images {
		im, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("images[%d]: %v", i, err)
		}
		b.raw = append(b.raw, im)
	}
	b.req.Features, b.req.Images = nil, nil
	return b, nil
}

// sameDecoding reports how two decodings differ ("" when they agree):
// the same values, bit for bit, the same images, labels and options.
func sameDecoding(got, want *decodedJSON) string {
	if got.rows != want.rows || len(got.x) != len(want.x) {
		return fmt.Sprintf("%d rows (%d values), want %d (%d)", got.rows, len(got.x), want.rows, len(want.x))
	}
	for i := range got.x {
		if math.Float32bits(got.x[i]) != math.Float32bits(want.x[i]) {
			return fmt.Sprintf("value %d is %v, want %v", i, got.x[i], want.x[i])
		}
	}
	if !slices.EqualFunc(got.raw, want.raw, bytes.Equal) {
		return "images differ"
	}
	g, w := got.req, want.req
	if !slices.Equal(g.Labels, w.Labels) {
		return fmt.Sprintf("labels %q, want %q", g.Labels, w.Labels)
	}
	g.Labels, w.Labels = nil, nil
	if !reflectEqualRequest(g, w) {
		return fmt.Sprintf("options %+v, want %+v", g, w)
	}
	return ""
}

func reflectEqualRequest(a, b Request) bool {
	return a.Label == b.Label && a.Top == b.Top && math.Float64bits(a.Lambda) == math.Float64bits(b.Lambda) && a.Online == b.Online && a.Batch == b.Batch
}

// decodeBody runs the streaming decoder on a body in memory.
func decodeBody(s *Server, body []byte, d int) (*decodedJSON, error) {
	return s.decodeJSON(bytes.NewReader(body), d)
}

// jsonCases are bodies both decoders accept (with d = 3) and bodies the
// streaming decoder refuses, with a word of its error.
func jsonCases(t testing.TB) (ok [][]byte, bad []struct {
	body string
	want string
}) {
	png := pngOf(t, 4, 4, color.RGBA{1, 2, 3, 255}, 1)
	ok = [][]byte{
		[]byte(`{"features": [[1, 2, 3]]}`),
		[]byte(`{"features": [[1e-3, -2.5E+2, 3.4028234e38], [0, -0, 1.0000001]], "labels": ["a", "b\u00e9"], "top": 2}`),
		[]byte(`{"features": [[0.1, 0.2, 0.3]], "label": "x", "lambda": 1e-300, "online": true, "batch": 7}`),
		[]byte(`{"label": "x", "features": [[1.17549435e-38, 1.4e-45, 7e-46]], "online": false}`),
		[]byte(` {"features":[[1,2,3],[4,5,6],[7,8,9]],"labels":null,"top":null} ` + "\n"),
		[]byte(`{"images": ["` + base64.StdEncoding.EncodeToString(png) + `"], "labels": []}`),
		[]byte(`{"images": ["` + strings.ReplaceAll(base64.StdEncoding.EncodeToString(png), "/", `\/`) + `", ""]}`),
		[]byte(`{}`),
		[]byte(`{"features": []}`),
		[]byte(`{"top": -0, "batch": 0, "lambda": -0.0}`),
	}
	bad = []struct {
		body string
		want string
	}{
		{`{"features": [[1, 2, 3, 4]]}`, "more than 3 values"},
		{`{"features": [[1, 2]]}`, "has 2 values"},
		{`{"features": [[1, 2, 3], [1, 2, 3, 4, 5]]}`, "features[1] has more than 3"},
		{`{"features": [[1, 2, "3"]]}`, "not a number"},
		{`{"features": [[1, 2, 1e39]]}`, "not finite"},
		{`{"features": [[1, 2, -1e39]]}`, "not finite"},
		{`{"features": [1, 2, 3]}`, "not an array"},
		{`{"features": [null]}`, "not an array"},
		{`{"features": {"a": 1}}`, "array of arrays"},
		{`{"features": [[1, 2, 3]], "features": [[1, 2, 3]]}`, "duplicate"},
		{`{"Features": [[1, 2, 3]]}`, "unknown field"},
		{`{"feature": [[1]]}`, "unknown field"},
		{`{"top": 1.5}`, "top"},
		{`{"top": 1e2}`, "top"},
		{`{"top": 99999999999999999999}`, "top"},
		{`{"top": "3"}`, "top"},
		{`{"lambda": 1e999}`, "lambda"},
		{`{"lambda": "1"}`, "lambda"},
		{`{"online": 1}`, "online"},
		{`{"label": 3}`, "label"},
		{`{"labels": ["a", 3]}`, "labels[1]"},
		{`{"labels": "a"}`, "labels"},
		{`{"images": [3]}`, "images[0]"},
		{`{"images": ["%%%"]}`, "base64"},
		{"{\"label\": \"a\xffb\"}", "UTF-8"},
		{`{} {}`, "more than one"},
		{`{}x`, "malformed"},
		{`[]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`{"features": [[1,2`, "malformed"},
		{``, "malformed"},
		{`{"features": [[1, 2, 3]],}`, "malformed"},
	}
	return ok, bad
}

// TestDecodeJSON checks the streaming decoder against encoding/json on
// bodies both accept (the same values bit for bit: float32 rounded once
// from the text, as encoding/json does) and its refusals, each a 4xx
// naming what is wrong.
func TestDecodeJSON(t *testing.T) {
	s, _, _ := testServer(t, nil)
	ok, bad := jsonCases(t)
	for _, body := range ok {
		want, err := referenceDecode(body, 3)
		if err != nil {
			t.Fatalf("encoding/json refuses %s: %v", body, err)
		}
		got, err := decodeBody(s, body, 3)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if diff := sameDecoding(got, want); diff != "" {
			t.Errorf("%s: %s", body, diff)
		}
	}
	for _, tc := range bad {
		_, err := decodeBody(s, []byte(tc.body), 3)
		var ae *apiError
		if !errors.As(err, &ae) || ae.code < 400 || ae.code >= 500 || !strings.Contains(ae.msg, tc.want) {
			t.Errorf("%s: %v, want a 4xx error with %q", tc.body, err, tc.want)
		}
	}
	// Limits on counts: rows, images and labels, each at the first one over.
	s2, _, _ := testServer(t, func(c *Config) { c.MaxRows = 2; c.MaxImages = 1 })
	for _, tc := range []struct{ body, want string }{
		{`{"features": [[1,2,3],[1,2,3],[1,2,3]]}`, "more than 2 feature vectors"},
		{`{"images": ["", ""]}`, "more than 1 images"},
		{`{"labels": ["a", "b", "c"]}`, "more than 2 labels"},
	} {
		_, err := decodeBody(s2, []byte(tc.body), 3)
		var ae *apiError
		if !errors.As(err, &ae) || ae.code != http.StatusRequestEntityTooLarge || !strings.Contains(ae.msg, tc.want) {
			t.Errorf("%s: %v, want 413 with %q", tc.body, err, tc.want)
		}
	}
}

// FuzzDecodeJSON: whatever the body, the streaming decoder never panics
// and refuses only with a client error; whatever it accepts, encoding/json
// accepts too and decodes to the same values, bit for bit (the streaming
// decoder is stricter: it refuses repeated names, names in another case
// and invalid UTF-8, which encoding/json lets through).
func FuzzDecodeJSON(f *testing.F) {
	ok, bad := jsonCases(f)
	for _, b := range ok {
		f.Add(b, uint8(3))
	}
	for _, b := range bad {
		f.Add([]byte(b.body), uint8(3))
	}
	f.Add([]byte(`{"features": [[1]]}`), uint8(1))
	f.Add([]byte(`{"features": [[]]}`), uint8(0))
	s, err := New(Config{Backend: newFileBackend(f, f.TempDir()+"/m.flycl"), MaxRows: 4, MaxImages: 2})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	f.Fuzz(func(t *testing.T, body []byte, d uint8) {
		got, err := decodeBody(s, body, int(d))
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.code < 400 || ae.code >= 500 || ae.msg == "" {
				t.Fatalf("not a client error: %T %v", err, err)
			}
			return
		}
		if len(got.x) != got.rows*int(d) || got.rows > 4 || len(got.raw) > 2 || len(got.req.Labels) > 4 {
			t.Fatalf("%d rows of %d values (d=%d), %d images, %d labels", got.rows, len(got.x), d, len(got.raw), len(got.req.Labels))
		}
		want, err := referenceDecode(body, int(d))
		if err != nil {
			t.Fatalf("accepted, but encoding/json refuses it: %v", err)
		}
		if diff := sameDecoding(got, want); diff != "" {
			t.Fatal(diff)
		}
	})
}

// patternBody is a JSON body made while it is read, so that the test
// holds none of it: head, count copies of unit, tail. It counts the bytes
// read and, once, calls atHalf when half of them have been.
type patternBody struct {
	head, unit, tail string
	count            int
	pos              int64 // bytes read
	atHalf           func()
}

func (b *patternBody) size() int64 {
	return int64(len(b.head) + b.count*len(b.unit) + len(b.tail))
}

// fill copies the body's bytes from offset off into p.
func (b *patternBody) fill(p []byte, off int64) {
	for len(p) > 0 {
		var src string
		switch i, n := off-int64(len(b.head)), int64(b.count*len(b.unit)); {
		case i < 0:
			src = b.head[off:]
		case i < n:
			src = b.unit[i%int64(len(b.unit)):]
		default:
			src = b.tail[i-n:]
		}
		c := copy(p, src)
		p, off = p[c:], off+int64(c)
	}
}

func (b *patternBody) Read(p []byte) (int, error) {
	size := b.size()
	if b.pos >= size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), size-b.pos)
	if half := size / 2; b.atHalf != nil && b.pos < half && b.pos+n >= half {
		n = half - b.pos + 1
		defer func() { f := b.atHalf; b.atHalf = nil; f() }()
	}
	b.fill(p[:n], b.pos)
	b.pos += n
	return int(n), nil
}

// heapAllocated is the bytes allocated on the heap by the process so far.
func heapAllocated() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// TestConcurrentMaxBodies sends three request bodies of the largest size
// at once, twice, to a model of d = 1000 with MaxBodyBytes = 2 MiB (the
// budget is its default, 2×MaxBodyBytes = 4 MiB), and measures the bytes
// the process allocates meanwhile (runtime/metrics: every byte the heap
// could have grown by, whatever the garbage collector did):
//
//   - three rows of a million values each, far over d: each is refused
//     with 400 at its 1001st value, having read less than 1% of its body,
//     and the three together allocate less than 1 MiB (encoding/json,
//     which read the whole document, allocated 30 MB for each);
//   - three bodies of valid rows, held at their halves until all three
//     are there (then 3×1 MiB of the 4 MiB budget are taken): one is
//     refused with 503 when its bytes go over the budget, the two others
//     are answered (1047 predictions each), and everything allocated stays
//     under 4 bytes per byte read, plus one block of rows per request, plus
//     4·m float32 per row answered (its expansion to m and the scores,
//     with room for the response). The first term follows from the
//     decoder: a value takes at least 2 bytes of the body ("0,") and 4 as
//     float32, and its block is copied once into the request's rows; the
//     budget bounds the bytes read at once. (encoding/json and the copy
//     into rows allocated 22 MB for each of these bodies, and all three
//     were read: 66 MB in all, over this bound of 36 MB; now 28 MB,
//     scoring and responses included.)
func TestConcurrentMaxBodies(t *testing.T) {
	const d, limit = 1000, 2 << 20
	fb, err := OpenFile(filepath.Join(t.TempDir(), "m.flycl"), func() (*flycl.Model, error) { return flycl.New(testConfig(), d) })
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: fb, MaxBodyBytes: limit, MaxRows: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	serve := func(path string, body io.Reader, size int64) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", path, body)
		req.ContentLength = size
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	x := make([][]float32, 4)
	for i := range x {
		x[i] = make([]float32, d)
		x[i][i] = 1
	}
	if rec := serve("/v1/learn", bytes.NewReader(jsonBody(t, Request{Features: x, Labels: []string{"a", "b", "c", "d"}})), -1); rec.Code != 200 {
		t.Fatalf("learn: %d %s", rec.Code, rec.Body)
	}
	m := testConfig().M
	row := "[" + strings.Repeat("0,", d-1) + "0]"

	for _, phase := range []string{"over-long rows", "valid rows"} {
		bodies := make([]*patternBody, 3)
		var half sync.WaitGroup
		half.Add(3)
		for i := range bodies {
			if phase == "over-long rows" {
				bodies[i] = &patternBody{head: `{"features": [[`, unit: "0,", tail: `0]]}`}
				bodies[i].count = int(limit-int64(len(bodies[i].head)+len(bodies[i].tail))) / len(bodies[i].unit)
			} else {
				bodies[i] = &patternBody{head: `{"features": [` + row, unit: "," + row, tail: `]}`,
					atHalf: func() { half.Done(); half.Wait() }}
				bodies[i].count = int(limit-int64(len(bodies[i].head)+len(bodies[i].tail))) / len(bodies[i].unit)
			}
			if bodies[i].size() > limit {
				t.Fatalf("body of %d bytes", bodies[i].size())
			}
		}
		runtime.GC()
		procmem.ResetPeak()
		rss0 := procmem.Current()
		a0 := heapAllocated()
		recs := make([]*httptest.ResponseRecorder, 3)
		var wg sync.WaitGroup
		for i, b := range bodies {
			wg.Go(func() {
				recs[i] = serve("/v1/predict", b, b.size())
				if recs[i].Code != 200 && b.atHalf != nil {
					half.Done() // refused before its half
				}
			})
		}
		wg.Wait()
		allocated := heapAllocated() - a0
		t.Logf("%s: 3 bodies of %d bytes: %d bytes allocated; peak RSS %d MB above the %d MB before", phase, bodies[0].size(), allocated,
			(procmem.Peak()-rss0)>>20, rss0>>20)
		switch phase {
		case "over-long rows":
			for i, rec := range recs {
				if rec.Code != 400 || !strings.Contains(rec.Body.String(), "more than 1000 values") {
					t.Fatalf("body %d: %d %s", i, rec.Code, rec.Body)
				}
				if read := bodies[i].pos; read*100 > bodies[i].size() {
					t.Errorf("body %d: refused after reading %d of its %d bytes", i, read, bodies[i].size())
				}
			}
			if allocated > 1<<20 {
				t.Errorf("three over-long rows allocated %d bytes, want < 1 MiB", allocated)
			}
		case "valid rows":
			ok, refused := 0, 0
			for i, rec := range recs {
				switch rec.Code {
				case 200:
					var pr PredictResponse
					if err := json.Unmarshal(rec.Body.Bytes(), &pr); err != nil || len(pr.Predictions) != bodies[i].count+1 {
						t.Fatalf("body %d: %d predictions (%v), want %d", i, len(pr.Predictions), err, bodies[i].count+1)
					}
					ok++
				case 503:
					if rec.Header().Get("Retry-After") == "" {
						t.Errorf("503 without Retry-After")
					}
					refused++
				default:
					t.Fatalf("body %d: %d %s", i, rec.Code, rec.Body)
				}
			}
			if ok != 2 || refused != 1 {
				t.Fatalf("%d answered, %d refused; want 2 and 1", ok, refused)
			}
			var read int64
			for _, b := range bodies {
				read += b.pos
			}
			rows := bodies[0].count + 1
			bound := uint64(4*read) + 3*maxBlockValues*4 + uint64(2*rows*4*m*4)
			t.Logf("read %d bytes in all; bound %d", read, bound)
			if allocated > bound {
				t.Errorf("allocated %d bytes, want at most %d (4× the %d bytes read + a block of rows for each request + 4·m float32 for each of the 2×%d rows answered, m=%d)",
					allocated, bound, read, rows, m)
			}
		}
		if n := s.bodies.inUse(); n != 0 {
			t.Fatalf("%d bytes of the budget still held", n)
		}
	}
}
