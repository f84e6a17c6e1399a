package pipeline

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestS3Registered: an s3:// path goes through Beam's s3 file system, which
// the pipeline registers: with the AWS endpoint pointed at a local server
// (AWS_ENDPOINT_URL; an IP endpoint makes the SDK address buckets by path),
// a read asks that server for /BUCKET/KEY and returns its bytes, and a write
// puts the bytes there. With an AWS configuration that cannot be loaded,
// Beam's file system panics; the pipeline answers an error naming the path.
func TestS3Registered(t *testing.T) {
	var mu sync.Mutex
	objects := map[string][]byte{"/bucket/dir/x.bin": []byte("flycl s3 bytes")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			b, ok := objects[r.URL.Path]
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			if r.Method == http.MethodGet {
				w.Write(b)
			}
		case http.MethodPut:
			var sb strings.Builder
			buf := make([]byte, 4096)
			for {
				n, err := r.Body.Read(buf)
				sb.Write(buf[:n])
				if err != nil {
					break
				}
			}
			objects[r.URL.Path] = []byte(sb.String())
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	defer srv.Close()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()

	b, err := readURL(ctx, "s3://bucket/dir/x.bin")
	if err != nil {
		t.Fatalf("read through s3: %v", err)
	}
	if string(b) != "flycl s3 bytes" {
		t.Fatalf("read %q, the server holds %q", b, "flycl s3 bytes")
	}
	if err := writeURL(ctx, "s3://bucket/out/m.flycl", []byte("model bytes")); err != nil {
		t.Fatalf("write through s3: %v", err)
	}
	mu.Lock()
	got := string(objects["/bucket/out/m.flycl"])
	mu.Unlock()
	if got != "model bytes" {
		t.Fatalf("the server holds %q after the write, want %q", got, "model bytes")
	}

	// a configuration that cannot be loaded: Beam's New panics
	bad := filepath.Join(home, "config")
	if err := os.WriteFile(bad, []byte("[profile p]\nregion = us-east-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", bad)
	t.Setenv("AWS_PROFILE", "no-such-profile")
	_, err = readURL(ctx, "s3://bucket/dir/x.bin")
	if err == nil || !strings.Contains(err.Error(), "s3://bucket/dir/x.bin") {
		t.Fatalf("read with an AWS profile that does not exist: %v, want an error naming the path", err)
	}
}
