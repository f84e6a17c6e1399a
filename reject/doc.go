// Package reject decides when a prediction is "unknown" (open-set
// rejection) and how class scores map to calibrated probabilities.
//
// There are only a few types in reject: Score, Rule, Calibration and
// Typical. A Score names a value computed from a sample's class scores
// (and, for ScoreTopCosine, the cosine of its code to the nearest class
// sum) that says how much the sample looks like a learned class. A Rule
// applies a threshold to one Score and carries the temperature of the
// calibrated probabilities softmax(scores/T); the zero Rule rejects
// nothing. A Calibration says how a learner derives its Rule from the
// exact leave-one-out scores of the samples it learns
// (flycl.Model.SetCalibration). A Typical is a Rule's pool of those
// scores, against which a value reads as a share of the learned samples
// ("less typical than 97% of them").
//
// The numerics work on plain matrices and scores, whatever learner
// computed them: the split-conformal threshold (ConformalRank,
// KeepThreshold, GuaranteedKeep), the rule of a pool of leave-one-out
// scores (FromPool), the temperature fit (FitTemperature,
// MinTemperature), the cosines to class sums (ClassCosine,
// LeaveOneOutCosines, UnitRows) and the jackknife extrapolation of
// leave-one-out scores toward a new sample's (Jackknife). The package sits
// in the core beside ridge and linalg: flycl imports it, and it imports
// nothing of the module but internal/minimize.
package reject
