package modelfile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// TestCheckComplete: a set of shards is complete when it is every shard
// i/N of one split of one source, each once; otherwise the
// *IncompleteError names what is missing or different. The expected
// fields are written out by hand from the shard lists.
func TestCheckComplete(t *testing.T) {
	sh := func(src string, n int, idx ...int) []Shard {
		var out []Shard
		for _, i := range idx {
			out = append(out, Shard{Index: i, Count: n, Source: src})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		shards []Shard
		want   *IncompleteError // nil: complete
		msg    string           // substring of the message
	}{
		{"one whole shard", sh("A", 1, 0), nil, ""},
		{"one whole shard, no source", sh("", 1, 0), nil, ""},
		{"complete 3", sh("A", 3, 2, 0, 1), nil, ""},
		{"missing 1/3", sh("A", 3, 0, 2), &IncompleteError{Missing: sh("A", 3, 1), MissingCount: 1}, "missing shard 1/3 of A"},
		{"only 0/4", sh("A", 4, 0), &IncompleteError{Missing: sh("A", 4, 1, 2, 3), MissingCount: 3}, "missing 3 shards: 1/4 of A, 2/4 of A, 3/4 of A"},
		{"duplicated", sh("A", 2, 0, 1, 1), &IncompleteError{Duplicate: sh("A", 2, 1)}, "shards given more than once: 1/2 of A"},
		{"mixed source", append(sh("A", 2, 0), sh("B", 2, 1)...),
			&IncompleteError{Sources: []string{"A", "B"}, Missing: append(sh("A", 2, 1), sh("B", 2, 0)...), MissingCount: 2}, "shards of 2 different sources (A; B)"},
		{"mixed N", append(sh("A", 3, 0), sh("A", 2, 1)...),
			&IncompleteError{Counts: []int{2, 3}, Missing: append(sh("A", 2, 0), sh("A", 3, 1, 2)...), MissingCount: 3}, "different numbers of shards (N = 2 and 3)"},
		{"no source, several", sh("", 2, 0, 1), &IncompleteError{NoSource: 2}, "2 shards record no source"},
		{"no source mixed with a named one", append(sh("", 2, 0), sh("A", 2, 1)...),
			&IncompleteError{Sources: []string{"no recorded source", "A"}, NoSource: 1, Missing: append(sh("", 2, 1), sh("A", 2, 0)...), MissingCount: 2}, "no recorded source"},
		{"forged huge N", sh("A", 1<<40, 0),
			&IncompleteError{Missing: sh("A", 1<<40, 1, 2, 3, 4, 5, 6, 7, 8), MissingCount: 1<<40 - 1}, ", ..."},
		{"none", nil, &IncompleteError{Empty: true}, "no shards"},
	} {
		err := CheckComplete(tc.shards)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ie *IncompleteError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %v, want an *IncompleteError", tc.name, err)
			continue
		}
		if !slices.Equal(ie.Sources, tc.want.Sources) || !slices.Equal(ie.Counts, tc.want.Counts) || !slices.Equal(ie.Missing, tc.want.Missing) ||
			ie.MissingCount != tc.want.MissingCount || !slices.Equal(ie.Duplicate, tc.want.Duplicate) || ie.NoSource != tc.want.NoSource || ie.Empty != tc.want.Empty {
			t.Errorf("%s: %+v, want %+v", tc.name, *ie, *tc.want)
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: message %q, want %q in it", tc.name, err, tc.msg)
		}
	}
	if err := CheckComplete(sh("A", 2, 2)); err == nil || errors.As(err, new(*IncompleteError)) {
		t.Errorf("shard 2/2: %v, want an error that it is no shard", err)
	}
}

// TestMergedShardsComplete: statistics files of real shards merged with
// MergeStats keep their shards, so CheckComplete on the merge (also one
// merged in stages) tells a whole split from part of one or a mix; the
// probes of flycl merge: 0/3 + 2/3, shards of two sources, 0/3 + 1/2.
func TestMergedShardsComplete(t *testing.T) {
	const d = 20
	m, _ := flycl.New(statsCfg, d)
	x, y := statsData(1, 60, d, 3)
	x2, y2 := statsData(2, 60, d, 3)
	three := decodeAll(t, shardFiles(t, m, x, y, d, 3, "features sha256:aa"))
	two := decodeAll(t, shardFiles(t, m, x, y, d, 2, "features sha256:aa"))
	other := decodeAll(t, shardFiles(t, m, x2, y2, d, 3, "features sha256:bb"))
	half, err := MergeStats(three[0], three[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		parts []*StatsFile
		want  string // "" complete; else in the message
	}{
		{"complete", three, ""},
		{"in stages", []*StatsFile{half, three[2]}, ""},
		{"missing 1/3", []*StatsFile{three[0], three[2]}, "missing shard 1/3 of features sha256:aa"},
		{"mixed source", []*StatsFile{three[0], other[1], three[2]}, "2 different sources (features sha256:aa; features sha256:bb)"},
		{"mixed N", []*StatsFile{three[0], two[1]}, "N = 2 and 3"},
	} {
		merged, err := MergeStats(tc.parts...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = CheckComplete(merged.Shards)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ie *IncompleteError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an *IncompleteError about %q", tc.name, err, tc.want)
		}
	}
}
