// Package deploy is a deployable Fly-CL classifier: a model with named
// classes, the pipeline that turns an image into its features, and the
// operations a deployed model needs (learn a task of named samples,
// online or at once; forget a class exactly or drop it; save atomically),
// shared by the flycl learn/predict/forget commands and the server.
//
// It sits above the core (flycl), the model file (modelfile) and feature
// extraction (extract, backbone, dataset); it resolves no flags,
// environment or default paths: callers pass them in.
package deploy
