// Package deploy is a deployable Fly-CL classifier: a model with named
// classes (Model: the core model as a named field, and the pipeline that
// turns an image into its features), the operations a deployed model
// needs in memory (learn a task of named samples, online or at once;
// forget a class exactly or drop it; learn merged statistics and a
// shard's statistics), and a new model's W generated while its first
// photos are extracted (Ahead). The input requests that give it samples are
// app/intake's.
//
// It writes no file: a model file, its journal and its lock are the
// store's (app/store: load, save, journal, undo, history), and scores
// become answers in app/answer. It sits above the core (flycl), the model
// file's format (modelfile) and feature extraction (extract, backbone,
// dataset) and app/intake; it resolves no flags, environment or default paths: callers
// pass them in.
package deploy
