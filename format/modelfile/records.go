package modelfile

import "github.com/flycl/flycl"

// Records returns task records as a model file's header holds them
// (Header.History: stage times in seconds by name, GCV scores that are
// not finite as null), for a caller that shows a model's history in the
// file's JSON form without writing a file.
func Records(h []flycl.TaskRecord) []Record {
	out := make([]Record, len(h))
	for i, r := range h {
		out[i] = toRecord(r)
	}
	return out
}
