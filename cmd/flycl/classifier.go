package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/watch"
)

// openImageClassifier opens the model file at path for classifying images
// (watch.OpenFile; what: "frames", "snapshots", in its errors), with
// --unknown's value, the backbone override, the ONNX Runtime threads and
// the ONNX Runtime library of the command's flags.
func openImageClassifier(cmd *cobra.Command, path, backboneSpec, unknown string, threads int, what string) (*watch.File, error) {
	return watch.OpenFile(cmd.Context(), path, watch.ModelOptions{What: what, Backbone: backboneSpec, Unknown: unknown, Threads: threads},
		resolver(cmd.Flags()), func(w string) { fmt.Fprintf(os.Stderr, "warning: %s\n", w) })
}
