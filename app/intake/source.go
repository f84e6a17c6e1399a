package intake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Sample keys name the samples of a statistics shard (modelfile.SampleID
// hashes them), so that a merge can refuse a sample counted twice. flycl
// stats and the Beam pipeline both name samples with these functions, so
// their shards merge with each other.

// FeatureSource returns the identity of a feature file: "features
// sha256:" followed by the hexadecimal SHA-256 of its bytes, so the same
// features under another name are the same source.
func FeatureSource(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return "features sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// RowKey is the key of row i of a source read row by row (a feature file's
// FeatureSource, or raw pixels).
func RowKey(source string, i int) string { return source + "#" + strconv.Itoa(i) }

// PathKey is the key of the image at path in the data set whose key
// (OpenData) is dataKey.
func PathKey(dataKey, path string) string { return dataKey + "#" + path }
