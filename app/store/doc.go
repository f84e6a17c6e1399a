// Package store is a model file as a durable store: the one place that
// takes a model file's lock, loads it (checkpoint and journal), makes a
// change durable (a checkpoint, and the change's record in the journal's
// history) before it is acknowledged, undoes and repairs.
//
// Its API follows bbolt's: Open with options (create, wait for the lock,
// read-only), Update as the only durable change (panic-safe, rolled back
// on error, acknowledged only when durable, its lock checked before the
// save and again before the acknowledgement), View (the model under the
// store's read lock: no caller keeps a pointer to it), Undo, History,
// Repair and Close; Learn, Forget and Merge are the transactions of the
// command line and the server, built on Update.
//
// It owns what a model file's changes are: their journal entries
// (LearnEntry, ForgetEntry, MergeEntry, UndoLast's), their replay on the
// checkpoint (Load, Replay), what an undo takes back (Undoable,
// UndoPlan, CheckLast) and the history (History). No other package
// writes a model file, its journal or its lock (owner_test.go checks the
// whole tree); a program that makes a model file at once saves it with
// Save.
//
//	st, err := store.Open(ctx, "cam.flycl", &store.Options{Journal: true})
//	...
//	defer st.Close()
//	err = st.Update(ctx, func(m *deploy.Model) (store.Change, error) {
//		before := store.PriorOf(m)
//		if _, err := m.Learn(ctx, x, names, nil, opt); err != nil {
//			return store.Change{}, err
//		}
//		return store.Change{Entry: store.LearnEntry(m.Version(), before, x, names, d, opt)}, nil
//	})
//
// A change's record is appended to the journal and synced before the
// model file names the change, so that whatever instant a crash hits, a
// change is in the history if and only if it is in the model (the next
// load completes a record the model file does not hold yet, or drops a
// merge's); each record names the version it started from, and an undo
// does not reach past a gap (Unbroken). A journal changed behind
// the store (its bytes checked against a running CRC-32C) is answered by
// saving the model, which holds every acknowledged change, to a new
// checkpoint. UndoIf undoes on a precondition (the learn it takes back,
// or the model's version).
//
// The command line's learn, forget, undo, merge and repair, the C
// library's save, and the server's file backend (its learn, forget and
// undo; with Checkpoints: changes appended to the journal, the model file
// rewritten as a checkpoint now and then), use it.
// What
// the promises assume: a local POSIX file system that honours fsync,
// rename and flock (docs/DEPLOY.md).
package store
