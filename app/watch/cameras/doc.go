// Package cameras runs several cameras in one process: each with its
// source, frame rate, zones, model and outputs (a webhook, an MQTT broker
// with Home Assistant discovery), read from a YAML configuration file
// (Parse, Load). A camera that fails stops alone: the others go on. Each
// camera's counts (frames read, classified and dropped, reconnections,
// events, the age of its last frame) are served as Prometheus metrics.
//
// The cameras are watch.Run each in its goroutine, with watch.FFmpeg
// sources, watch.Poster webhooks and mqtt.Publisher publishers; cameras
// (and zones with a model of their own, Camera.ZoneModels) that name the
// same model share one loaded copy of it (its classifier is called from
// several goroutines at once), opened by the caller's Options.Open.
//
// Several is such a file as a command gives it (flycl watch --config),
// its models opened with watch.OpenFile, each reloading on its own.
// Single is one camera given field by field (flycl watch's flags), with
// what only it does: doubtful frames saved, frames collected, a labelling
// inbox. Both check their fields (Check) before anything is opened and
// run in one call (Run); an error of a field is a *FieldError naming it,
// which a command names as its flags.
package cameras
