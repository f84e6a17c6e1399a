// Package baselines implements the methods Fly-CL is compared with in the
// paper, on the same frozen features: NCM (SimpleCIL), RanPAC without its
// first-session fine-tuning, F-OAL, RanDumb and a joint (non-incremental)
// ridge upper bound. Each learns one task at a time from its streaming
// statistics and predicts among the classes seen so far.
package baselines
