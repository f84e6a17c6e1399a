package store

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// Load reads a model file for a caller that keeps the model in memory
// (a read-only server, the C library) and never writes the file: the
// checkpoint and the changes journalled since, replayed in order. A
// writer opens the file as a Store instead. A writer's checkpoint between
// the read of the file and of its journal makes it read both again
// (whileReplaced).
func Load(path string) (*deploy.Model, error) {
	return whileReplaced(path, func() (*deploy.Model, error) { return load(path) })
}

// readTries bounds how many times a reader reads a model file and its
// journal again when the file was replaced between the two reads.
const readTries = 10

// whileReplaced runs read, which reads the model file at path and then
// its journal, again while it fails with modelfile.ErrJournal and the
// file at path is no longer the one it started with: a writer's
// checkpoint (a new file, then a journal that continues it) came between
// the two reads, and the journal continues a newer file. A journal that
// does not continue a file left in place is the error it is.
func whileReplaced[T any](path string, read func() (T, error)) (T, error) {
	var v T
	var err error
	for range readTries {
		before, serr := os.Stat(path)
		v, err = read()
		if err == nil || serr != nil || !errors.Is(err, modelfile.ErrJournal) {
			return v, err
		}
		if after, serr := os.Stat(path); serr != nil || (os.SameFile(before, after) && after.ModTime().Equal(before.ModTime()) && after.Size() == before.Size()) {
			return v, err
		}
	}
	return v, err
}

func load(path string) (*deploy.Model, error) {
	f, m, err := modelfile.LoadForLearning(path)
	if err != nil {
		return nil, err
	}
	deploy.Calibrate(m)
	dm := deploy.OfFile(f, m)
	jc, err := modelfile.ReadJournal(path, dm.Checkpoint())
	if err != nil {
		return nil, err
	}
	if jc.Torn != nil {
		dm.Warnings = append(dm.Warnings, fmt.Sprintf("%s: %s", modelfile.JournalPath(path), jc.Torn))
	}
	for _, e := range jc.Entries {
		if err := Replay(context.Background(), dm, e); err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
	}
	return dm, nil
}

// LoadFile reads a model file for reading only (predict, info, export):
// as modelfile.Load, with the changes its journal holds replayed when it
// has any (then through a mutable model, as Load). Like Load, it reads
// again when a writer replaced the file between its read of the file and
// of the journal.
func LoadFile(path string) (*modelfile.File, error) {
	return whileReplaced(path, func() (*modelfile.File, error) { return loadFile(path) })
}

func loadFile(path string) (*modelfile.File, error) {
	f, err := modelfile.Load(path)
	if err != nil {
		return nil, err
	}
	jc, err := modelfile.ReadJournal(path, f.Checkpoint())
	if err != nil {
		return nil, err
	}
	if jc.Torn != nil {
		f.Warnings = append(f.Warnings, fmt.Sprintf("%s: %s", modelfile.JournalPath(path), jc.Torn))
	}
	if len(jc.Entries) == 0 {
		return f, nil
	}
	m, err := load(path)
	if err != nil {
		return nil, err
	}
	return &modelfile.File{Snapshot: m.Model.Snapshot(), Pipeline: m.Pipeline, Created: f.Created, Saved: f.Saved, Format: f.Format, CRC: f.CRC, ID: f.ID, Warnings: f.Warnings}, nil
}

// saveModel writes the model to path atomically (modelfile.Save) and
// records the file on it as the checkpoint its journal continues. It
// reads the statistics in place (codec.View), with no copy of G.
func saveModel(m *deploy.Model, path string) error {
	f := m.FileView()
	if err := modelfile.Save(path, f); err != nil {
		return err
	}
	m.Saved(f)
	return nil
}

// Save writes the model m, built in memory, to a model file at path
// whole, under the file's lock (taken for the write: an error when
// another writer holds it): a program or test that makes a model file at
// once. A file there is replaced, unless it has a journal (its changes,
// which the new file would not continue: change such a file through a
// Store). The folder must exist.
func Save(ctx context.Context, path string, m *deploy.Model) error {
	lk, err := modelfile.TakeLock(ctx, path, modelfile.LockOptions{Command: "store.Save"})
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if _, err := os.Stat(modelfile.JournalPath(path)); err == nil {
		return fmt.Errorf("store: %s has a journal of its changes, which a model saved over it would not continue: change it through a Store (Open)", path)
	}
	if err := saveModel(m, path); err != nil {
		return err
	}
	return lk.Check()
}
