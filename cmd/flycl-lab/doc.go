// Command flycl-lab is Fly-CL's research lab: it runs the paper's
// class-incremental protocol for methods × seeds on feature files or data
// sets (run, reproduce, sweep), fetches the paper's data sets and
// backbones (fetch), draws and tabulates the results (report, heatmap,
// hebbian, analyze), writes projection matrices for other runtimes
// (export-w) and measures the engine and its parts (bench). Models,
// serving and cameras are flycl's (cmd/flycl), whose help is for the
// people who run them; "flycl NAME" runs "flycl-lab NAME" for the
// commands here.
//
// Like flycl, the package is thin: each command parses its flags (shared
// ones through cmd/internal/cli), resolves paths through package locate
// and calls a library package under lab/ with explicit inputs, which
// decides and computes; the command prints. See docs/ARCHITECTURE.md.
package main
