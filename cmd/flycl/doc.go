// Command flycl is Fly-CL's command for models and cameras. It keeps and
// uses model files (learn, predict, forget, undo, classes, info --model),
// serves them over HTTP (serve), watches video streams and Frigate with
// them (watch, frigate), exports them (export) and extracts backbone
// features of a data set (extract). Run "flycl help" for the subcommands
// and "flycl help environment" for the settings it reads from the
// environment. The research lab's commands (run, sweep, bench, ...) are
// cmd/flycl-lab's; "flycl NAME" runs "flycl-lab NAME" for them (lab.go).
//
// The package is thin: each command parses its flags, checks them (an
// error quotes the value given), resolves paths through package locate (the
// flag, then a FLYCL_* environment variable, then a documented default)
// and calls the library packages with explicit inputs. A command is an
// options struct (its flags), AddFlags, and a run method that opens the
// model file's store or the input, calls one library function and prints
// (forget.go: store.Forget decides whether a forget is exact; predict.go:
// answer.Predict answers). The rules live in the libraries and are tested
// there. Every command is one line of its group in main.go (Models, Deploy,
// Features: the groups "flycl help" lists). What this command and
// flycl-lab share on the command line is cmd/internal/cli. See docs/ARCHITECTURE.md.
package main
