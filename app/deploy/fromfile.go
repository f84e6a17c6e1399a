package deploy

import (
	"time"

	"github.com/flycl/flycl/format/modelfile"
)

// FromFile returns a mutable model of a decoded model file
// (modelfile.Decode: bytes that did not come from a path, so no journal
// is read), keeping its pipeline, creation time and ID, so that saving it
// again continues the same model. The statistics are copied
// (flycl.Snapshot.Model).
func FromFile(f *modelfile.File) (*Model, error) {
	m, err := f.Snapshot.Model()
	if err != nil {
		return nil, err
	}
	Calibrate(m)
	return &Model{Model: m, Pipeline: f.Pipeline, Created: f.Created, crc: f.CRC, base: m.Version(), id: f.ID}, nil
}

// SetIdentity gives a model that was never saved (its ID zero) the ID and
// creation time its saves will record, so that a caller that writes one
// model several ways (to a file, to bytes) writes one model, not several
// with an ID each. A model that has an ID keeps it and its creation time.
func (m *Model) SetIdentity(id modelfile.ModelID, created time.Time) {
	if m.id.IsZero() {
		m.id, m.Created = id, created
	}
}
