package backbone

import (
	"os"
	"testing"
)

// testLibrary is the ONNX Runtime library for the tests: $FLYCL_ORT_LIB, or
// where scripts/install-deps --ort puts it in this checkout. Tests that
// need the runtime skip when neither exists.
func testLibrary() string {
	if p := os.Getenv("FLYCL_ORT_LIB"); p != "" {
		return p
	}
	return "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
}

// TestMain loads ONNX Runtime once when it is there, for every test that
// opens a session (the library is given explicitly, as cmd/flycl does).
func TestMain(m *testing.M) {
	Init(testLibrary()) // a failure shows as ErrNoRuntime in the tests, which skip
	os.Exit(m.Run())
}
