// Package cli is what flycl's two programs share on the command line:
// cmd/flycl (models, serving, cameras) and cmd/flycl-lab (the research
// protocol, benchmarks and figures). It turns flags into the explicit
// inputs of the library packages and decides nothing itself: Fly-CL's
// hyper-parameters as flags (ModelFlags, through app/configflag), a data
// set and a backbone (DataFlags, ExtractFlags, through app/deploy and
// vision/extract), the paths package locate resolves from a flag, a
// FLYCL_* variable or a default (ORTLibrary, CacheDir, OpenBackbone, …),
// a progress line on stderr (Progress) and the flag error handler that
// suggests the nearest flags (FlagError).
package cli
