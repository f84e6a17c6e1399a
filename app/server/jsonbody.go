package server

import (
	"encoding/base64"
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// decodedJSON is a JSON request body read by decodeJSON.
type decodedJSON struct {
	req  Request   // the fields other than images and features
	raw  [][]byte  // the images, decoded from base64
	x    []float32 // the feature vectors, rows×d
	rows int
}

// maxBlockValues bounds the feature values of one block of rows (1 MiB).
const maxBlockValues = 1 << 18

// decodeJSON reads a JSON body (the fields of Request) as a stream of
// tokens, without building the document in memory: each feature vector is
// checked against d while it is read, so a row longer than d is refused at
// its (d+1)-th value, and the number of rows, images and labels at the
// first one over its limit. The body's values are kept once (features as
// float32, images decoded from base64). Names must be spelled as in
// Request; an unknown or repeated name, or a second JSON value, is an
// error.
func (s *Server) decodeJSON(r io.Reader, d int) (*decodedJSON, error) {
	dec := jsontext.NewDecoder(r)
	b := &decodedJSON{}
	if err := open(dec, '{', "the body is not a JSON object"); err != nil {
		return nil, err
	}
	for {
		k, err := peek(dec)
		if err != nil {
			return nil, err
		}
		if k == '}' {
			break
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, malformed(err)
		}
		name := tok.String()
		if k, err := peek(dec); err != nil {
			return nil, err
		} else if k == 'n' { // null: the field's zero value
			if _, err := dec.ReadToken(); err != nil {
				return nil, malformed(err)
			}
			continue
		}
		switch name {
		case "features":
			err = s.decodeFeatures(dec, d, b)
		case "images":
			err = s.decodeImages(dec, b)
		case "labels":
			err = s.decodeLabels(dec, b)
		case "label":
			b.req.Label, err = readString(dec, name)
		case "top":
			b.req.Top, err = readInt(dec, name)
		case "batch":
			b.req.Batch, err = readInt(dec, name)
		case "lambda":
			b.req.Lambda, err = readFloat(dec, name)
		case "online":
			b.req.Online, err = readBool(dec, name)
		default:
			err = errorf(http.StatusBadRequest, "malformed JSON body: unknown field %q (want features, images, labels, label, top, lambda, online or batch)", name)
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return nil, malformed(err)
	}
	switch _, err := dec.ReadToken(); {
	case err == io.EOF:
		return b, nil
	case err == nil:
		return nil, errorf(http.StatusBadRequest, "malformed JSON body: more than one JSON value")
	default:
		return nil, malformed(err)
	}
}

// decodeFeatures reads "features": an array of rows of d numbers each.
// The rows go into blocks of doubling size (at most maxBlockValues
// values each) joined at the end: what is allocated is at most twice the
// values the body actually holds, plus one block, never what it claims.
// (A value takes at least 2 bytes of the body, "0,", and 4 as float32: a
// body of B bytes allocates at most 4B bytes here, plus 1 MiB.)
func (s *Server) decodeFeatures(dec *jsontext.Decoder, d int, b *decodedJSON) error {
	if err := open(dec, '[', "features must be an array of arrays of numbers"); err != nil {
		return err
	}
	var blocks [][]float32
	var cur []float32
	blockRows, maxBlockRows := 1, max(1, maxBlockValues/max(d, 1))
	for row := 0; ; row++ {
		k, err := peek(dec)
		if err != nil {
			return err
		}
		if k == ']' {
			break
		}
		if row == s.cfg.MaxRows {
			return errorf(http.StatusRequestEntityTooLarge, "more than %d feature vectors in one request; the limit is %d", s.cfg.MaxRows, s.cfg.MaxRows)
		}
		if k != '[' {
			return errorf(http.StatusBadRequest, "malformed JSON body: features[%d] is not an array of numbers", row)
		}
		dec.ReadToken()
		if len(cur)+d > cap(cur) {
			if len(cur) > 0 {
				blocks = append(blocks, cur)
			}
			cur = make([]float32, 0, blockRows*d)
			blockRows = min(2*blockRows, maxBlockRows)
		}
		for j := 0; ; j++ {
			k, err := peek(dec)
			if err != nil {
				return err
			}
			if k == ']' {
				dec.ReadToken()
				if j != d {
					return errorf(http.StatusBadRequest, "features[%d] has %d values; the model wants d=%d", row, j, d)
				}
				break
			}
			if k != '0' {
				return errorf(http.StatusBadRequest, "malformed JSON body: features[%d][%d] is not a number", row, j)
			}
			if j == d {
				return errorf(http.StatusBadRequest, "features[%d] has more than %d values; the model wants d=%d", row, d, d)
			}
			v, err := dec.ReadValue()
			if err != nil {
				return malformed(err)
			}
			// As encoding/json reads a float32: rounded once, from the text.
			f, err := strconv.ParseFloat(string(v), 32)
			if err != nil || math.IsInf(f, 0) {
				return errorf(http.StatusBadRequest, "features[%d][%d] is not finite as a float32: %s", row, j, v)
			}
			cur = append(cur, float32(f))
		}
		b.rows++
	}
	dec.ReadToken() // ']'
	if len(blocks) == 0 {
		b.x = cur
		return nil
	}
	b.x = make([]float32, 0, b.rows*d)
	for _, bl := range append(blocks, cur) {
		b.x = append(b.x, bl...)
	}
	return nil
}

// decodeImages reads "images": an array of base64 strings.
func (s *Server) decodeImages(dec *jsontext.Decoder, b *decodedJSON) error {
	if err := open(dec, '[', "images must be an array of base64 strings"); err != nil {
		return err
	}
	var text []byte // one image's base64, unquoted (reused)
	for i := 0; ; i++ {
		k, err := peek(dec)
		if err != nil {
			return err
		}
		if k == ']' {
			dec.ReadToken()
			return nil
		}
		if i == s.cfg.MaxImages {
			return errorf(http.StatusRequestEntityTooLarge, "more than %d images in one request; the limit is %d", s.cfg.MaxImages, s.cfg.MaxImages)
		}
		if k != '"' {
			return errorf(http.StatusBadRequest, "malformed JSON body: images[%d] is not a string (base64 of an image file)", i)
		}
		v, err := dec.ReadValue()
		if err != nil {
			return malformed(err)
		}
		if text, err = jsontext.AppendUnquote(text[:0], v); err != nil {
			return errorf(http.StatusBadRequest, "malformed JSON body: images[%d]: %v", i, err)
		}
		im := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
		n, err := base64.StdEncoding.Decode(im, text)
		if err != nil {
			return errorf(http.StatusBadRequest, "images[%d]: not base64: %v", i, err)
		}
		b.raw = append(b.raw, im[:n])
	}
}

// decodeLabels reads "labels": an array of strings, at most one per
// sample a request may hold.
func (s *Server) decodeLabels(dec *jsontext.Decoder, b *decodedJSON) error {
	if err := open(dec, '[', "labels must be an array of strings"); err != nil {
		return err
	}
	most := max(s.cfg.MaxRows, s.cfg.MaxImages)
	b.req.Labels = []string{}
	for i := 0; ; i++ {
		k, err := peek(dec)
		if err != nil {
			return err
		}
		if k == ']' {
			dec.ReadToken()
			return nil
		}
		if i == most {
			return errorf(http.StatusRequestEntityTooLarge, "more than %d labels in one request; a request holds at most %d samples", most, most)
		}
		l, err := readString(dec, "labels["+strconv.Itoa(i)+"]")
		if err != nil {
			return err
		}
		b.req.Labels = append(b.req.Labels, l)
	}
}

// peek returns the kind of the next token, or the error that reading it
// would give.
func peek(dec *jsontext.Decoder) (jsontext.Kind, error) {
	if k := dec.PeekKind(); k != 0 {
		return k, nil
	}
	_, err := dec.ReadToken()
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return 0, malformed(err)
}

// open reads the opening token of an object or array, or refuses the body
// with msg.
func open(dec *jsontext.Decoder, kind jsontext.Kind, msg string) error {
	k, err := peek(dec)
	if err != nil {
		return err
	}
	if k != kind {
		return errorf(http.StatusBadRequest, "malformed JSON body: %s", msg)
	}
	_, err = dec.ReadToken()
	return malformed(err)
}

// malformed maps an error of the JSON reader: a body over the limit (413)
// or the decoding budget spent (503) stays itself, anything else is a
// malformed body (400).
func malformed(err error) error {
	if err == nil {
		return nil
	}
	if be := bodyError(err); be != nil {
		return be
	}
	return errorf(http.StatusBadRequest, "malformed JSON body: %v", err)
}

func readString(dec *jsontext.Decoder, name string) (string, error) {
	if k, err := peek(dec); err != nil {
		return "", err
	} else if k != '"' {
		return "", errorf(http.StatusBadRequest, "malformed JSON body: %s must be a string", name)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return "", malformed(err)
	}
	return tok.String(), nil
}

func readNumber(dec *jsontext.Decoder, name, want string) (string, error) {
	if k, err := peek(dec); err != nil {
		return "", err
	} else if k != '0' {
		return "", errorf(http.StatusBadRequest, "malformed JSON body: %s must be %s", name, want)
	}
	v, err := dec.ReadValue()
	if err != nil {
		return "", malformed(err)
	}
	return string(v), nil
}

func readInt(dec *jsontext.Decoder, name string) (int, error) {
	v, err := readNumber(dec, name, "an integer")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 0)
	if err != nil {
		return 0, errorf(http.StatusBadRequest, "malformed JSON body: %s %s is not an integer in range", name, v)
	}
	return int(n), nil
}

func readFloat(dec *jsontext.Decoder, name string) (float64, error) {
	v, err := readNumber(dec, name, "a number")
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, errorf(http.StatusBadRequest, "malformed JSON body: %s %s is out of the float64 range", name, v)
	}
	return f, nil
}

func readBool(dec *jsontext.Decoder, name string) (bool, error) {
	k, err := peek(dec)
	if err != nil {
		return false, err
	}
	if k != 't' && k != 'f' {
		return false, errorf(http.StatusBadRequest, "malformed JSON body: %s must be true or false", name)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return false, malformed(err)
	}
	return tok.Bool(), nil
}
