// Package fielderr is the one error type of a setting refused by its
// field: a server's options (app/server.OptionError), a learn's options
// (app/store.OptionError), an input request (app/intake.InputError), a
// camera's or Frigate's settings (app/watch/cameras.FieldError,
// app/frigate.FieldError) and an inbox's bounds (app/inbox.BoundError) are
// each this type under their own name, so that errors.As with any of
// those names finds it.
//
// A library names the field as Go does ("Config.MaxBodyBytes",
// "MQTT.User"); a command that took the setting from a flag sets Name to
// say the flag instead (internal/flagbind.Names reads the flags from the
// settings struct's flag tags), and every field the message mentions is
// named through it.
package fielderr
