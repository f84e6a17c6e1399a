package store

import (
	"slices"
	"testing"

	"github.com/flycl/flycl/format/modelfile"
)

// JournalSamples gives the features of a class's samples for an exact
// forget. A learn of another length in the history (a journal is outside
// bytes) is left out: its rows added to the model's would give a forget
// the right count of misaligned features (here 2 + 2 values of a for
// one more sample of 4), which it would subtract from the statistics.
func TestJournalSamplesOtherLength(t *testing.T) {
	hist := []*modelfile.JournalEntry{
		{Op: "learn", Version: 1, Names: []string{"a", "b"}, D: 4, X: []float32{1, 2, 3, 4, 5, 6, 7, 8}},
		{Op: "learn", Version: 2, Names: []string{"a", "a"}, D: 2, X: []float32{9, 10, 11, 12}},
		{Op: "learn", Version: 3, Names: []string{"b", "a"}, D: 4, X: []float32{0, 0, 0, 0, 13, 14, 15, 16}},
		{Op: "learn", Version: 4, Names: []string{"a"}, D: 4, X: []float32{-1, -1, -1, -1}},
		{Op: "unlearn", Version: 5, Undoes: 4, Names: []string{"a"}, D: 4, X: []float32{-1, -1, -1, -1}},
	}
	want := []float32{1, 2, 3, 4, 13, 14, 15, 16}
	if got := JournalSamples(hist, "a", 4); !slices.Equal(got, want) {
		t.Fatalf("samples of a: %v, want %v", got, want)
	}
}
