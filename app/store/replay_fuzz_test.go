package store

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// FuzzReplay appends to the journal of a model file (d=3, version 1,
// classes a and a2) one entry whose every field is the fuzzer's, as a
// writer that is not flycl, or one whose bytes were damaged and whose
// CRC happens to hold, could leave it: the journal's decoder takes any
// entry of a known op with consistent sizes, so what Replay sees of it
// (names, λ, batch, policy, versions, features) is outside bytes. Load
// never panics: it refuses the entry naming the model file, or gives the
// model at the entry's version (a merge's record, never replayed, is cut
// off as a torn tail).
func FuzzReplay(f *testing.F) {
	ctx := context.Background()
	base := filepath.Join(f.TempDir(), "m.flycl")
	st, err := Open(ctx, base, &Options{Journal: true, Command: "FuzzReplay"})
	if err != nil {
		f.Fatal(err)
	}
	m, err := deploy.New(cfg, 3, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	if err := st.Create(m); err != nil {
		f.Fatal(err)
	}
	if err := st.Update(ctx, learn(ctx, "a", 0)); err != nil {
		f.Fatal(err)
	}
	if err := st.Close(); err != nil {
		f.Fatal(err)
	}
	file, err := os.ReadFile(base)
	if err != nil {
		f.Fatal(err)
	}
	journal, err := os.ReadFile(modelfile.JournalPath(base))
	if err != nil {
		f.Fatal(err)
	}
	rows := func(v ...float32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	two := rows(1, 2, 3, 3, 2, 1)
	//    op  version before λ before undoes names  λ    online batch policy d  x
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), "a,b", 0.0, false, 0, "", 3, two)
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), "c,c", 10.0, false, 0, "", 3, two)
	f.Add(uint8(0), uint64(3), uint64(1), 1.0, uint64(0), "a,b", 0.0, true, 1, "", 3, two) // online: one version a row
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), "a,b", 0.0, false, 0, "fixed", 3, two)
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), "a,b", 0.0, false, 0, "nope", 3, two)
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), ",", 0.0, false, 0, "", 3, two)
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), "a,b", 0.0, false, 7, "", 3, two)
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), "a,b", 0.0, false, 0, "", 3, rows(float32(math.NaN()), 2, 3, 3, 2, float32(math.Inf(1))))
	f.Add(uint8(0), uint64(2), uint64(1), 1.0, uint64(0), "a,b,c", 0.0, false, 0, "", 2, two)
	f.Add(uint8(1), uint64(2), uint64(1), 1.0, uint64(0), "a", 0.0, false, 0, "", 3, rows(1, 2, 3))
	f.Add(uint8(1), uint64(2), uint64(1), 1.0, uint64(0), "a", 0.0, false, 0, "", 3, []byte(nil))
	f.Add(uint8(1), uint64(2), uint64(1), 1.0, uint64(0), "zz", 0.0, false, 0, "", 3, []byte(nil))
	f.Add(uint8(2), uint64(2), uint64(1), 0.0, uint64(1), "a,a2", 0.0, false, 0, "", 3, two)
	f.Add(uint8(2), uint64(2), uint64(1), 0.0, uint64(1), "b,b", 0.0, false, 0, "", 3, two)
	f.Add(uint8(3), uint64(2), uint64(1), 1.0, uint64(0), "m", 0.0, false, 0, "", 3, []byte(nil))
	f.Add(uint8(0), uint64(1), uint64(0), 1.0, uint64(0), "a,b", 0.0, false, 0, "", 3, two)
	f.Fuzz(func(t *testing.T, op uint8, version, before uint64, lambdaBefore float64, undoes uint64, names string,
		lambda float64, online bool, batch int, policy string, d int, x []byte) {
		e := &modelfile.JournalEntry{Op: []string{"learn", "forget", "unlearn", "merge"}[op%4], Version: version,
			VersionBefore: before, LambdaBefore: lambdaBefore, Undoes: undoes, Names: strings.Split(names, ","),
			Lambda: lambda, Online: online, Batch: batch, LambdaPolicy: policy, D: d}
		for i := 0; i+4 <= len(x); i += 4 {
			e.X = append(e.X, math.Float32frombits(binary.LittleEndian.Uint32(x[i:])))
		}
		path := filepath.Join(t.TempDir(), "m.flycl")
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(modelfile.JournalPath(path), journal, 0o644); err != nil {
			t.Fatal(err)
		}
		cp, err := modelfile.ReadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		j, _, err := modelfile.OpenJournal(path, cp)
		if err != nil {
			t.Fatal(err)
		}
		err = j.Append(e)
		j.Close()
		if err != nil {
			return // not an entry the journal can hold
		}
		if _, err := modelfile.ReadJournal(path, cp); err != nil {
			return // the decoder refuses it: FuzzDecodeJournal's part
		}
		dm, err := Load(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("%+v refused without naming %s: %v", e, path, err)
			}
			return
		}
		switch {
		case e.Version <= 1: // already in the model file: skipped
		case e.Op == "merge":
			// a merge's record above its model file is a merge never
			// saved, so never acknowledged: a torn tail, not replayed
			if dm.Model.Version() != 1 || len(dm.Warnings) == 0 {
				t.Fatalf("%+v: version %d, warnings %q", e, dm.Model.Version(), dm.Warnings)
			}
		case dm.Model.Version() != e.Version:
			t.Fatalf("%+v replayed to version %d", e, dm.Model.Version())
		}
	})
}
