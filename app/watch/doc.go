// Package watch classifies a video stream frame by frame and turns what it
// sees into events.
//
// A Source opens a Stream of frames. FFmpeg is the Source for everything
// ffmpeg reads (video files, RTSP and HTTP streams, MJPEG over HTTP, V4L2
// cameras): it runs the ffmpeg program as a subprocess, which samples the
// stream at a frame rate, scales it and writes binary PPM frames (raw RGB
// behind a header that carries each frame's size) to a pipe that Reader
// parses into reused buffers. No binding to ffmpeg's libraries is linked.
//
// Run reads a Source, classifies every frame with a Classifier
// (ModelClassifier: a model's backbone, transform, scores and "unknown"
// rejection), writes one JSON line per frame and per event, and sends
// events, debounced by a Debouncer (a new answer counts when it holds for
// n frames), to an EventSink: a Poster delivers them to a webhook,
// retried with backoff from a bounded queue that drops its oldest event
// when full. A Saver keeps frames of doubtful predictions for labelling;
// a Keeper keeps them in a labelling inbox (package inbox) that flycl
// serve shows and learns from. A Reloading classifier, fed by a
// FileWatcher that polls the model file, picks up a new model version
// without a restart: one atomic swap, a frame (all its zones) classified
// by one model. A zone may have a classifier of its own
// (Config.ZoneClassify: a model of its own, reloaded on its own).
// The class names background and none are reserved (answer.IsReserved): a frame
// whose top class is one of them is answered "unknown", so a camera's
// empty scene and a user's "none of these" photos sharpen rejection
// without ever being an answer. ParseRejection also takes the rejection
// as a share of the known photos kept ("keep:0.95").
//
// Run's memory is bounded whatever the source does: three frame buffers
// are reused, a frame's size is bounded before anything is allocated for
// it, a live source's frames are skipped (not queued) when classification
// falls behind, and the event queue has a fixed length. A live source is
// reconnected with exponential backoff when it ends or stalls; a file ends
// Run at its end. Cancelling the context stops Run cleanly.
package watch
