package frigate

// The agreement rule that turns an object's tries into one sub-label.
//
// Frigate's own object classifier (frigate/data_processing/real_time/
// custom_classification.py: MAX_OBJECT_CLASSIFICATIONS = 16 and
// get_weighted_score) classifies at most 16 crops of an object, keeps
// the tries whose score passes the model's threshold, and assigns the
// most frequent class once there are at least 3 such tries and it has
// at least 60% of them; it never assigns its "none" class; the score is
// the mean score of the winning class's tries.
//
// flycl's rule is the same with one change: a try the model rejects
// ("unknown", flycl's "none") or answers below MinProbability is a vote
// for none and counts in the total, where Frigate drops tries under its
// threshold. Frigate's classifier has no rejection (a softmax over the
// user's classes, so dropping its low scores is its only "none"); flycl
// calibrates one, so a stranger that is rejected in 2 of 3 crops is not
// named by the third. The rule is therefore stricter than Frigate's: it
// names an object only when at least 60% of all its tries name that
// class.

// vote is one try: the class answered ("" for none) and its probability
// (NaN when the model has none).
type vote struct {
	answer string
	prob   float64
}

// Rule decides an object from its tries.
type Rule struct {
	// MinTries is the least number of tries before a decision (Frigate: 3).
	MinTries int `flag:"min-tries"`
	// Agreement is the least share of all tries that name the class
	// (Frigate: 0.6).
	Agreement float64 `flag:"agreement"`
}

// decide returns the class the votes agree on and its mean probability
// (NaN when no vote had one), or "" when they do not agree yet.
func (r Rule) decide(votes []vote) (string, float64) {
	if len(votes) < r.MinTries {
		return "", 0
	}
	count := map[string]int{}
	best := ""
	for _, v := range votes {
		if v.answer == "" {
			continue
		}
		count[v.answer]++
		if c := count[v.answer]; c > count[best] || (c == count[best] && v.answer < best) {
			best = v.answer
		}
	}
	if best == "" || float64(count[best]) < r.Agreement*float64(len(votes)) {
		return "", 0
	}
	var sum float64
	n := 0
	for _, v := range votes {
		if v.answer == best && v.prob == v.prob {
			sum += v.prob
			n++
		}
	}
	if n == 0 {
		return best, nan
	}
	return best, sum / float64(n)
}
