package export

// ToleranceWithUncertain exposes tolerance to the external tests: the
// bound and, per sample, how many coordinates top-k may keep differently.
var ToleranceWithUncertain = tolerance
