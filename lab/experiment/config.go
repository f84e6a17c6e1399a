package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"

	"github.com/flycl/flycl"
)

// Config is everything besides the seeds that decides the outcome of an
// experiment: Fly-CL's settings (used by every Fly-CL variant and the
// ridge baselines), the other methods' settings, how the features were
// made, and the identity of every input file. Results may be merged only
// when their configs agree (Diff).
//
// In result.json Fly-CL's settings are flycl.Config's fields under their
// own names, except that its seed is "w_seed" (MarshalJSON): a field added
// to flycl.Config is recorded with no change here.
type Config struct {
	// Config is Fly-CL's configuration: m, p, k, the seed of its W
	// (variants such as flycl-dense draw theirs from the same seed), top-k
	// mode, the λ grid and its scale, how GCV and the projection are
	// computed.
	flycl.Config `json:"-"`
	// WSHA256 is the SHA-256 of the W the seed gives (or of --w).
	WSHA256      string  `json:"w_sha256,omitempty"`
	OnlineBatch  int     `json:"online_batch,omitempty"`
	OnlineLambda float64 `json:"online_lambda,omitempty"`
	// HebbianPasses is the passes per task of flycl-hebbian.
	HebbianPasses int `json:"hebbian_passes,omitempty"`
	// Data is the data as the user gave it (a data-set spec, or "features").
	Data string `json:"data"`
	// Backbone, Preset and Output describe feature extraction ("" when
	// the features were given).
	Backbone string `json:"backbone,omitempty"`
	Preset   string `json:"preset,omitempty"`
	Output   string `json:"output,omitempty"`
	// Inputs are the files read: feature files, data sets, weights, W.
	Inputs []Input `json:"inputs"`
}

// renamed are flycl.Config's JSON names that result.json writes
// otherwise (its seed is W's: "w_seed").
var renamed = map[string]string{"seed": "w_seed"}

// always are flycl.Config's fields that it omits at their defaults and
// result.json has always written: each after the key after.
var always = []struct {
	key, after string
	value      func(flycl.Config) any
}{
	{"lambda_scale", "lambdas", func(c flycl.Config) any { return c.LambdaScale }},
	{"gcv_scope", "gcv", func(c flycl.Config) any { return c.GCVScope }},
}

// configFields is Config's JSON form without the embedded flycl.Config
// (MarshalJSON adds its fields).
type configFields Config

// MarshalJSON writes flycl.Config's fields (the seed as "w_seed", the λ
// scale always), then the others.
func (c Config) MarshalJSON() ([]byte, error) {
	fc, err := json.Marshal(c.Config)
	if err != nil {
		return nil, err
	}
	keys, vals, err := object(fc)
	if err != nil {
		return nil, err
	}
	rest, err := json.Marshal(configFields(c))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if n, ok := renamed[k]; ok {
			k = n
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vals[i])
		b.WriteByte(',')
		for _, a := range always {
			if k == a.after && !slices.Contains(keys, a.key) {
				v, err := json.Marshal(a.value(c.Config))
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(&b, "%q:%s,", a.key, v)
			}
		}
	}
	b.Write(rest[1:]) // rest is an object: "{...}"
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes, and result.json files of
// every schema: fields a file does not have keep their zero value (their
// default).
func (c *Config) UnmarshalJSON(b []byte) error {
	keys, vals, err := object(b)
	if err != nil {
		return err
	}
	var fc bytes.Buffer
	fc.WriteByte('{')
	for i, k := range keys {
		for from, to := range renamed {
			if k == to {
				k = from
			}
		}
		if i > 0 {
			fc.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		fc.Write(kb)
		fc.WriteByte(':')
		fc.Write(vals[i])
	}
	fc.WriteByte('}')
	var f configFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*c = Config(f)
	return json.Unmarshal(fc.Bytes(), &c.Config)
}

// object splits a JSON object into its keys and raw values, in order.
func object(b []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("experiment: config is not a JSON object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("experiment: config: %w", err)
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("experiment: config %s: %w", k, err)
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, nil
}

// Input identifies one input file by its content.
type Input struct {
	Role   string `json:"role"` // what it was used for: train, test, data, weights, w
	Path   string `json:"path"` // as the user gave it
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Identify reads the file at path (as given by the user) and returns its
// size and SHA-256. A directory is identified by the sorted relative
// paths, sizes and SHA-256s of all regular files below it, hashed again.
func Identify(role, path string) (Input, error) {
	in := Input{Role: role, Path: path}
	fi, err := os.Stat(path)
	if err != nil {
		return in, fmt.Errorf("identify %s: %w", path, err)
	}
	if !fi.IsDir() {
		in.Size, in.SHA256, err = hashFile(path)
		return in, err
	}
	var files []string
	err = fs.WalkDir(os.DirFS(path), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return in, fmt.Errorf("identify %s: %w", path, err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		size, sum, err := hashFile(path + "/" + f)
		if err != nil {
			return in, err
		}
		in.Size += size
		fmt.Fprintf(h, "%s\x00%d\x00%s\n", f, size, sum)
	}
	in.SHA256 = hex.EncodeToString(h.Sum(nil))
	return in, nil
}

func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", fmt.Errorf("identify %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("identify %s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// Diff lists the settings in which b differs from a, as "name: a vs b".
// Input files are compared by role, size and SHA-256, not by path, so a
// copy of the same data elsewhere agrees. Nil configs (files of schema 0)
// agree with each other and differ from any other.
func Diff(a, b *Config) []string {
	if a == nil || b == nil {
		if a == b {
			return nil
		}
		return []string{"config: recorded in one result only (the other predates schema 1)"}
	}
	fa, fb := flatten(a), flatten(b)
	keys := make([]string, 0, len(fa))
	for k := range fa {
		keys = append(keys, k)
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if fa[k] != fb[k] {
			out = append(out, fmt.Sprintf("%s: %s vs %s", k, orNone(fa[k]), orNone(fb[k])))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// flatten maps every setting of c to its value as text; inputs are keyed
// by role and compared without their paths.
func flatten(c *Config) map[string]string {
	cc := *c
	inputs := slices.Clone(cc.Inputs)
	cc.Inputs = nil
	b, _ := json.Marshal(cc)
	var m map[string]any
	json.Unmarshal(b, &m)
	out := map[string]string{}
	for k, v := range m {
		if k == "inputs" {
			continue
		}
		vb, _ := json.Marshal(v)
		out[k] = string(vb)
	}
	seen := map[string]int{}
	for _, in := range inputs {
		key := "input " + in.Role
		if n := seen[in.Role]; n > 0 {
			key += "#" + strconv.Itoa(n+1)
		}
		seen[in.Role]++
		out[key] = fmt.Sprintf("%d bytes, sha256 %s", in.Size, in.SHA256)
	}
	return out
}

// JSONFloat is a float64 that is written as null when it is NaN or
// infinite (JSON has no such numbers) and read back from null as NaN.
type JSONFloat float64

// MarshalJSON implements json.Marshaler.
func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *JSONFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = JSONFloat(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = JSONFloat(v)
	return nil
}

// Floats converts scores to JSONFloats.
func Floats(v []float64) []JSONFloat {
	out := make([]JSONFloat, len(v))
	for i, x := range v {
		out[i] = JSONFloat(x)
	}
	return out
}
