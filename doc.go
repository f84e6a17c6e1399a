// Package flycl implements Fly-CL, class-incremental continual learning on
// top of a frozen feature extractor: each feature vector v is expanded by a
// fixed sparse random projection h = W v (m×d, p non-zeros per row), only
// its k largest coordinates are kept, and a ridge classifier on the
// expanded codes is updated from streaming statistics. The ridge parameter
// of every task is chosen by generalised cross-validation on that task and
// the classifier is re-solved by Cholesky. There is no forgetting
// machinery: the statistics of earlier tasks are kept exactly.
//
// The package's nouns are five types: Config, Model, Snapshot, Predictor
// and ClassList. The other exported types are their options, records and
// errors: LearnOptions, LambdaPolicy, GCVScope and LambdaScale (settings);
// TaskRecord, LambdaIssue, Stages and Stage (what a learn did); Ranked (a
// ranked class); State (a Snapshot's statistics, for the model file); and
// FieldError, NameError and MemoryError.
//
// A Config holds the hyper-parameters (m, p, k, W's seed, the λ grid and
// how GCV scores it); its zero fields take their defaults. New makes an
// untrained Model from one.
//
// A Model learns and forgets. Learn takes one task (n×d features and
// their labels; classes may be new or known) and re-solves the
// classifier; nil LearnOptions are the paper's per-task GCV, and the
// options fix λ, keep the first learn's λ (LambdaPolicy), or take a task
// by its statistics (TaskStats, merged across shards). Forget removes a
// class exactly given its data, Unlearn takes samples back out. Every
// change returns a TaskRecord and either happens entirely or leaves the
// model as it was. A Model also names its classes (SetClassName,
// LabelsFor) and rejects unknown inputs by the rule of package reject
// (SetCalibration, Rejection); it predicts through its Predictor.
//
// A Snapshot is an immutable copy of a Model at one version: what a model
// file stores (package modelfile), and a Model again by Snapshot.Model.
// A Predictor is an immutable classifier taken from a Model or a
// Snapshot: safe for concurrent use, it predicts (Predict, Accuracy),
// ranks classes (Top) and gives the scores and cosines rejection needs,
// while the Model goes on learning.
//
// A ClassList is the classes of a Model or a Predictor at one version,
// as Classes returns them: labels in class-index order (the columns of
// the scores), names, sample counts, and the label of a name (LabelOf).
//
// Errors that callers tell apart are ErrNotTrained, ErrUnknownClass,
// ErrTooLarge and ErrBadInput (IsInput); a bad Config is a *FieldError; a
// learn over the memory limit its caller set is a *MemoryError (IsInput).
//
// The package knows nothing about images, files or networks: inputs are
// row-major float32 feature matrices and integer labels. Backbones, data
// sets, persistence, the CLI and the server are layers around it.
package flycl
