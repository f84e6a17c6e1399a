package modelfile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxListed bounds the shards an IncompleteError lists by name (a forged
// file may claim a split into billions of shards).
const maxListed = 8

// IncompleteError reports a set of statistics shards that is not one
// whole split of one source (CheckComplete): learning from it would learn
// part of a task, or parts of two. Each field says one thing that is
// wrong; the zero value of a field means that thing is right.
type IncompleteError struct {
	// Sources are the sources the shards come from, when more than one
	// (shards of two different feature files or data sets).
	Sources []string
	// Counts are the shard counts N one source was split into, when more
	// than one (shard 0/3 with shard 1/2).
	Counts []int
	// Missing are shards of the split that no part holds (the first
	// maxListed of them, by source, N and index); MissingCount is how
	// many are missing in all.
	Missing      []Shard
	MissingCount int
	// Duplicate are shards held more than once.
	Duplicate []Shard
	// NoSource is the number of shards that record no source (written
	// without one, by a library caller or an older tool), when there are
	// several shards: whether they split one data set cannot be told.
	NoSource int
	// Empty: there were no shards at all.
	Empty bool
}

func shardName(s Shard) string {
	src := s.Source
	if src == "" {
		src = "no recorded source"
	}
	return fmt.Sprintf("%d/%d of %s", s.Index, s.Count, src)
}

func (e *IncompleteError) Error() string {
	if e.Empty {
		return "modelfile: incomplete statistics: no shards"
	}
	var why []string
	if len(e.Sources) > 0 {
		why = append(why, fmt.Sprintf("shards of %d different sources (%s)", len(e.Sources), strings.Join(e.Sources, "; ")))
	}
	if len(e.Counts) > 0 {
		ns := make([]string, len(e.Counts))
		for i, n := range e.Counts {
			ns[i] = fmt.Sprint(n)
		}
		why = append(why, fmt.Sprintf("one source split into different numbers of shards (N = %s)", strings.Join(ns, " and ")))
	}
	if e.NoSource > 0 {
		why = append(why, fmt.Sprintf("%d shards record no source, so it cannot be told whether they split one data set", e.NoSource))
	}
	if e.MissingCount > 0 {
		names := make([]string, len(e.Missing))
		for i, s := range e.Missing {
			names[i] = shardName(s)
		}
		list := strings.Join(names, ", ")
		if e.MissingCount > len(e.Missing) {
			list += ", ..."
		}
		if e.MissingCount == 1 {
			why = append(why, "missing shard "+list)
		} else {
			why = append(why, fmt.Sprintf("missing %d shards: %s", e.MissingCount, list))
		}
	}
	if len(e.Duplicate) > 0 {
		names := make([]string, len(e.Duplicate))
		for i, s := range e.Duplicate {
			names[i] = shardName(s)
		}
		why = append(why, "shards given more than once: "+strings.Join(names, ", "))
	}
	return "modelfile: incomplete statistics: " + strings.Join(why, "; ")
}

// CheckComplete reports whether shards are exactly one whole split of one
// source: every shard i/N for i = 0..N-1, each once, all with the same N
// and the same recorded source (Shard.Source: a feature file's content
// digest, or a data set's key). It returns nil, or an *IncompleteError
// naming what is missing or different. A single shard 0/1 is complete
// whatever its source; several shards that record no source are not
// (nothing tells that they split one data set).
//
// A merged statistics file keeps the shards of its parts (StatsFile.Shards),
// so a set merged in stages is checked whole at the end.
func CheckComplete(shards []Shard) error {
	if len(shards) == 0 {
		return &IncompleteError{Empty: true}
	}
	for _, s := range shards {
		if s.Count <= 0 || s.Index < 0 || s.Index >= s.Count {
			return fmt.Errorf("modelfile: shard %d/%d is not a shard (want 0 <= i < N)", s.Index, s.Count)
		}
	}
	if len(shards) == 1 && shards[0].Index == 0 && shards[0].Count == 1 {
		return nil
	}
	e := &IncompleteError{}
	type group struct {
		source string
		count  int
	}
	idx := map[group][]int{}
	var sources []string
	counts := map[string][]int{}
	for _, s := range shards {
		if s.Source == "" {
			e.NoSource++
		}
		g := group{s.Source, s.Count}
		if _, ok := idx[g]; !ok {
			if !slices.Contains(sources, s.Source) {
				sources = append(sources, s.Source)
			}
			counts[s.Source] = append(counts[s.Source], s.Count)
		}
		idx[g] = append(idx[g], s.Index)
	}
	if len(sources) > 1 {
		for _, src := range sources {
			if src == "" {
				src = "no recorded source"
			}
			e.Sources = append(e.Sources, src)
		}
	}
	for _, src := range sources {
		if c := counts[src]; len(c) > 1 && len(e.Counts) == 0 {
			e.Counts = slices.Sorted(slices.Values(c))
		}
	}
	groups := slices.Collect(maps.Keys(idx))
	slices.SortFunc(groups, func(a, b group) int {
		return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(a.count, b.count))
	})
	for _, g := range groups {
		is := slices.Sorted(slices.Values(idx[g]))
		// missing: the gaps of 0..count-1 between the sorted indices,
		// listed up to maxListed without walking a forged count
		next := 0
		gap := func(lo, hi int) { // indices [lo, hi) are missing
			e.MissingCount += max(hi-lo, 0)
			for i := lo; i < hi && len(e.Missing) < maxListed; i++ {
				e.Missing = append(e.Missing, Shard{Index: i, Count: g.count, Source: g.source})
			}
		}
		for k, i := range is {
			if k > 0 && i == is[k-1] {
				if len(e.Duplicate) < maxListed {
					e.Duplicate = append(e.Duplicate, Shard{Index: i, Count: g.count, Source: g.source})
				}
				continue
			}
			gap(next, i)
			next = i + 1
		}
		gap(next, g.count)
	}
	if e.NoSource > 0 && len(shards) == 1 {
		e.NoSource = 0 // one shard: what is wrong is what is missing
	}
	if len(e.Sources) == 0 && len(e.Counts) == 0 && e.MissingCount == 0 && len(e.Duplicate) == 0 && e.NoSource == 0 {
		return nil
	}
	return e
}

// BadInput reports that an incomplete set is the input's fault
// (flycl.IsInput): the command refuses it with its input status.
func (e *IncompleteError) BadInput() bool { return true }
