package extract

import "os"

// testLibrary is the ONNX Runtime library for the tests: $FLYCL_ORT_LIB, or
// where scripts/install-deps puts it in this checkout. Tests that need the
// runtime skip when neither exists.
func testLibrary() string {
	if p := os.Getenv("FLYCL_ORT_LIB"); p != "" {
		return p
	}
	return "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
}
