// Package openset measures how well scores tell learned classes from
// classes a model has never seen (open-set recognition), on real feature
// sets: a Fly-CL model learns some classes, and the test images of the
// others are the unknown ones.
//
// It compares the scores a Fly-CL model can give a "known" decision by
// (the top ridge score, the margin to the second, the energy of the
// scores; see reject.Score) with scores from the open-set literature
// computed in feature space: the Mahalanobis distance to the nearest
// class mean under a shared covariance (Lee et al., 2018), the cosine to
// the nearest class mean, the cosine to the k-th nearest training
// sample (Sun et al., 2022), ViM (Wang et al., 2022), the cosines on
// features whose large activations are squashed (log1p, in the spirit of
// ReAct, Sun et al., 2021) and on the model's sparse codes, and the sum of
// the z-scores of the top score and a cosine to the class means. For each
// it reports AUROC, the false positive rate at 95% true positive rate,
// and the accuracy on the known classes that pass; for the ridge scores
// also what the threshold a model calibrates by itself (leave-one-out,
// reject.Calibration) keeps and rejects, and the same for the
// cosines to the class means and their fusions, calibrated on exact
// leave-one-out scores of the same samples; and the calibration error
// (ECE) of the probabilities before and after the fitted temperature.
//
// Two protocols: "split" learns Known classes in one task and treats the
// others as unknown; "incremental" learns all classes in Tasks tasks and,
// after each task but the last, treats the classes of later tasks as
// unknown.
//
// FewShot is the few-shot benchmark (a first learn of a few photos per
// broad class, its calibrated rejection and probabilities), and Recipe
// puts flycl and Frigate's custom-classification recipe side by side on
// its splits: the recipe's head (Dense, dropout, softmax, trained by Adam
// as Keras trains it) runs outside Go, through a HeadRunner (PythonHead:
// python/bench/frigate_head.py, PyTorch).
//
// Video is the video benchmark: WriteVideoFrames makes object tracks
// (several crops of a photo, as a detector's crop and pasted into a
// camera's scene) and empty scenes from the ImageNet sample, and Video
// measures the strangers labelled as a known class per frame and per
// object under each multi-frame rule (the first frame, flycl's Frigate
// vote, a zone's debounce, reject.Track), with and without the reserved
// classes background and none; its Targets check the best rule at any
// per-frame keep against half the per-frame rate, beside the ROC points
// of the open-set values per frame and per object and how much of their
// variance lies between objects.
package openset
