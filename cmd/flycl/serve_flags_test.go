package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/server"
)

// TestServeFlagErrors: limits the server would silently replace by its
// defaults, non-positive timeouts and negative counts are refused with an
// error quoting the value; for an existing model file, --dim and the
// Fly-CL flags that contradict it are refused as learn refuses them. All
// fail before serve listens.
func TestServeFlagErrors(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	blobs(t, train, 1, 6, 10, "cat", "dog")
	model := filepath.Join(dir, "m.flycl")
	if _, err := runCLI(t, "learn", "--model", model, "--features", train, "--m", "200", "--p", "3", "--k", "60"); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "new.flycl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", fresh, "--dim", "6", "--queue", "0"}, "--queue 0: must be at least 1"},
		{[]string{"--model", fresh, "--dim", "6", "--max-body", "-5"}, "--max-body -5"},
		{[]string{"--model", fresh, "--dim", "6", "--max-pixels", "0"}, "--max-pixels 0"},
		{[]string{"--model", fresh, "--dim", "6", "--max-request-pixels", "0"}, "--max-request-pixels 0"},
		{[]string{"--model", fresh, "--dim", "6", "--max-images", "0"}, "--max-images 0"},
		{[]string{"--model", fresh, "--dim", "6", "--extractions", "-1"}, "--extractions -1"},
		{[]string{"--model", fresh, "--dim", "6", "--decode-pixels", "0"}, "--decode-pixels 0"},
		{[]string{"--model", fresh, "--dim", "6", "--decode-wait", "0s"}, "--decode-wait 0s"},
		{[]string{"--model", fresh, "--dim", "-6"}, "--dim -6"},
		{[]string{"--model", fresh, "--dim", "6", "--threads", "-2"}, "--threads -2"},
		{[]string{"--model", fresh, "--dim", "6", "--read-timeout", "0s"}, "--read-timeout 0s"},
		{[]string{"--model", fresh, "--dim", "6", "--shutdown-timeout", "-1s"}, "--shutdown-timeout -1s"},
		{[]string{"--model", fresh, "--dim", "6", "--precision", "int4"}, "--precision"},
		{[]string{"--model", fresh, "--dim", "6", "--calib", "0"}, "--calib 0: must be at least 1"},
		{[]string{"--model", fresh, "--dim", "6", "--calib-method", "median"}, "--calib-method"},
		{[]string{"--model", fresh, "--dim", "6", "--p", "3", "--precision", "int8"}, "give --backbone"},
		{[]string{"--model", fresh, "--dim", "6", "--p", "3", "--calib-method", "mse"}, "give --backbone"},
		{[]string{"--model", model, "--dim", "7"}, "--dim 7, but the model"},
		{[]string{"--model", model, "--m", "300", "--k", "60"}, "--m 300, but the model has 200"},
		{[]string{"--model", model, "--k", "10"}, "--k 10, but the model has 60"},
	} {
		_, err := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// TestServeCalibFlagsNeedInt8: --calib and --calib-method calibrate the
// int8 backbone of a new model; with fp32 features (the default) they
// would be ignored, so serve refuses them before it listens. (An int8
// model's restart accepts them, as it accepts --precision int8: its file
// fixes the calibration.)
func TestServeCalibFlagsNeedInt8(t *testing.T) {
	lib, sq := squeezeNet(t)
	fresh := filepath.Join(t.TempDir(), "new.flycl")
	for _, args := range [][]string{
		{"--calib", "8"},
		{"--calib-method", "mse"},
		{"--precision", "fp32", "--calib", "8"},
	} {
		_, err := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--model", fresh, "--ort-lib", lib, "--backbone", "squeezenet:" + sq}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "--precision int8") {
			t.Errorf("serve %v: %v, want an error naming --precision int8", args, err)
		}
	}
}

// TestServeFlagOf: every option a read-only server refuses has a flag
// tag, so an *server.OptionError always names a flag (that the tags'
// flags are serve's is TestFieldFlagsExist).
func TestServeFlagOf(t *testing.T) {
	names := serveFlagNamesOf()
	for _, field := range server.WriterOnly {
		if names[field] == "" {
			t.Errorf("server.WriterOnly's %s has no flag", field)
		}
	}
}
