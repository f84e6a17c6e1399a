package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/flycl/flycl/linalg"
)

// parseVersion reads flycl version's "key: value" lines.
func parseVersion(t *testing.T, out string) map[string]string {
	t.Helper()
	kv := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || k == "" || v == "" {
			t.Fatalf("line %q is not \"key: value\" in\n%s", line, out)
		}
		if _, dup := kv[k]; dup {
			t.Fatalf("key %q twice in\n%s", k, out)
		}
		kv[k] = v
	}
	return kv
}

// TestVersion: flycl version and flycl --version print the same lines,
// each "key: value", with the Go release this test runs on, the linear
// algebra linalg reports, and an ONNX Runtime line whether or not it is
// found; -ldflags' version and commit take precedence.
func TestVersion(t *testing.T) {
	out, err := runCLI(t, "version", "--ort-lib", "/nonexistent/libonnxruntime.so")
	if err != nil {
		t.Fatal(err)
	}
	kv := parseVersion(t, out)
	for _, k := range []string{"flycl", "commit", "go", "platform", "linear algebra", "onnx runtime", "cpu"} {
		if kv[k] == "" {
			t.Errorf("no %q line in\n%s", k, out)
		}
	}
	if kv["go"] != runtime.Version() {
		t.Errorf("go: %q, want %q", kv["go"], runtime.Version())
	}
	if kv["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("platform: %q", kv["platform"])
	}
	if want := linalg.BackendVersion(); kv["linear algebra"] != want || (linalg.Backend() == "openblas") != strings.HasPrefix(want, "OpenBLAS ") {
		t.Errorf("linear algebra: %q (backend %s)", kv["linear algebra"], linalg.Backend())
	}
	if !strings.HasPrefix(kv["onnx runtime"], "not ") {
		t.Errorf("onnx runtime from a missing library: %q, want not found", kv["onnx runtime"])
	}
	flag, err := runCLI(t, "--version", "--ort-lib", "/nonexistent/libonnxruntime.so")
	if err != nil {
		t.Fatal(err)
	}
	if flag != out {
		t.Errorf("--version printed\n%s\nversion printed\n%s", flag, out)
	}
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123abc"
	out, err = runCLI(t, "version", "--ort-lib", "/nonexistent/libonnxruntime.so")
	if kv := parseVersion(t, out); err != nil || kv["flycl"] != "v1.2.3" || kv["commit"] != "0123abc" {
		t.Errorf("with ldflags: %v\n%s", err, out)
	}
}
