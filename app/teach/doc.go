// Package teach answers "have I taught it enough?" for a deployed model:
// from the samples its journal holds, it computes each class's
// leave-one-out accuracy and the share of its samples the model's
// rejection would answer "unknown", the confusions between classes, and
// the samples the model gets most wrong, each scored by the classifier
// solved without it (flycl.Model.LeaveOneOutScores: exact, no refit).
//
// A class whose samples are mostly right when left out, and seldom
// rejected, is taught enough for inputs like them; a class with few
// samples, a low leave-one-out accuracy, a high rejected share, or a
// confusion with another class needs more (and more varied) photos. The
// journal keeps each learn's feature vectors, not its photos: a sample
// is named by its learn (the model version it made, and when) and its
// row in it.
package teach
