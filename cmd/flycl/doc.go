// Command flycl is Fly-CL's one binary. It runs class-incremental learning
// experiments (extract backbone features; run the protocol for methods ×
// seeds; sweep, heatmap, report), keeps and uses model files (learn,
// predict, forget, classes, info --model), serves them over HTTP
// (serve) and watches video streams with them (watch). Run "flycl help" for the subcommands and "flycl help
// environment" for the settings it reads from the environment.
//
// The package is thin: each command parses its flags, checks them (an
// error quotes the value given), resolves paths through package locate (the
// flag, then a FLYCL_* environment variable, then a documented default)
// and calls the library packages with explicit inputs. A command is an
// options struct (its flags), AddFlags, and a run method that opens the
// model file's store or the input, calls one library function and prints
// (forget.go: store.Forget decides whether a forget is exact; predict.go:
// answer.Predict answers). The rules live in the libraries and are tested
// there. Every command is one line of its group in main.go (Models, Deploy, Research, Benchmarks:
// the groups "flycl help" lists). See docs/ARCHITECTURE.md.
package main
