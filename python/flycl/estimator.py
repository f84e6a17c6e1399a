"""FlyCLClassifier: Fly-CL as a scikit-learn estimator."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .images import ImageFiles, is_images
from .model import CONFIG_KEYS, Answers, Extractor, Model

DEFAULT_P = 300


def class_name(label):
    """The name a label has in the model: str(label), except for a negative
    integer, whose name would read as a label number (a model stores
    non-negative labels, and a name that is a number must be its own
    label): -1 is named "label -1"."""
    name = str(label)
    if name.lstrip("-").isdigit() and name.startswith("-"):
        return "label " + name
    return name


class FlyCLClassifier(ClassifierMixin, BaseEstimator):
    """Fly-CL (sparse random projection, top-k, ridge with λ chosen by GCV)
    as a scikit-learn classifier, with continual learning.

    The parameters are flycl.Config's fields (defaults: the paper's, as
    ``flycl learn``): ``m`` expansion dimension, ``p`` non-zeros per row of
    W (None: 300, or the feature dimension d when d < 300), ``k`` codes kept
    by top-k (at most m), ``seed`` of W, ``topk`` ("signed" or
    "magnitude"), ``lambdas`` the GCV grid (None: 1e6..1e9), ``gcv``
    ("auto", "dual", "primal", "eigen", "band"), ``gcv_scope`` ("task" or
    "all"), ``projection`` ("auto", "dense", "sparse"), ``lambda_scale``
    ("absolute" or "relative"), ``widen_grid``.

    ``backbone`` (None: X are feature vectors) names an image backbone as
    ``flycl learn --backbone`` takes it ("mobilenetv2", "squeezenet", ...):
    then X is a sequence of images (file paths, PIL images, or uint8 arrays
    H x W x 3), whose features libflycl extracts with ``flycl learn``'s
    exact preprocessing, and the model records the backbone, so that its
    saved file serves photos (``flycl serve``, ``flycl predict IMAGE``).
    Feature vectors are still accepted beside images.

    ``fit`` learns one task from scratch; ``partial_fit`` learns one more
    task (λ by GCV on it, the statistics of earlier tasks kept exactly).
    ``forget`` removes a class, ``unlearn`` takes the last learn back,
    ``answer`` gives "unknown" answers, ``save``/``load`` use the model file
    format of the flycl command. Pickling stores the model file's bytes.

    Classes are named by ``str(label)`` inside the model (a negative integer
    label -1 as "label -1"). ``classes_`` is
    sorted; with ``partial_fit(..., classes=...)`` it holds every class
    given, and those not learned yet score -inf (probability 0).
    """

    def __init__(self, m=10000, p=None, k=3000, seed=0, topk="signed", lambdas=None, gcv="auto",
                 gcv_scope="task", projection="auto", lambda_scale="absolute", widen_grid=False,
                 backbone=None):
        self.m = m
        self.p = p
        self.k = k
        self.seed = seed
        self.topk = topk
        self.lambdas = lambdas
        self.gcv = gcv
        self.gcv_scope = gcv_scope
        self.projection = projection
        self.lambda_scale = lambda_scale
        self.widen_grid = widen_grid
        self.backbone = backbone

    # ---- configuration ----

    def _config(self, d):
        cfg = {key: getattr(self, key) for key in CONFIG_KEYS}
        if cfg["p"] is None:
            cfg["p"] = min(DEFAULT_P, d)
        if cfg["lambdas"] is not None:
            cfg["lambdas"] = [float(v) for v in np.ravel(cfg["lambdas"])]
        return cfg

    def _new_model(self, d, extractor=None):
        model = Model(d, **self._config(d))
        if extractor is not None:
            model.use_extractor(extractor)
        return model

    # ---- images ----

    def _extractor(self):
        """The image extractor: the fitted model's own (its recorded
        backbone), else backbone's; None when X must be features."""
        ext = getattr(self, "_extractor_", None)
        if ext is not None:
            return ext
        model = getattr(self, "model_", None)
        if model is not None and (model.info().get("pipeline") or None):
            ext = Extractor.for_model(model)
        elif self.backbone is not None:
            ext = Extractor(self.backbone)
        else:
            return None
        self._extractor_ = ext
        return ext

    def _input(self, X):
        """X as features: images go through the extractor."""
        if not is_images(X):
            return X
        ext = self._extractor()
        if ext is None:
            raise ValueError("X holds images: give FlyCLClassifier a backbone (backbone=\"mobilenetv2\") "
                             "to learn from images, or pass feature vectors")
        with ImageFiles(X) as paths:
            return ext.features(paths)

    def _input_new(self, X):
        """X as features (_input), and for images the new model they go
        into, made while they are extracted: its W, generated from the seed,
        is most of what a new model costs and needs only the features'
        dimension, known before the first image is read, so it is made in
        a thread meanwhile (libflycl's calls release the GIL). None for
        feature vectors, or when making the model failed: it is made again
        after the checks of X and y, whose errors come first."""
        ext = self._extractor() if is_images(X) else None
        if ext is None:
            return self._input(X), None
        with ThreadPoolExecutor(1) as pool:
            made = pool.submit(self._new_model, ext.dim, ext)
            X = self._input(X)  # on an error, the pool waits for the model and drops it
            try:
                return X, made.result()
            except Exception:
                return X, None

    # ---- learning ----

    def fit(self, X, y):
        """Learns X, y as one task on a new model (λ by GCV on it)."""
        self.__dict__.pop("model_", None)
        self.__dict__.pop("_extractor_", None)
        X, model = self._input_new(X)
        X, y = self._validate_data(X, y, dtype=np.float32, order="C", reset=True)
        check_classification_targets(y)
        if model is None:
            model = self._new_model(X.shape[1], self._extractor())
        self._fixed = None
        self._names = {}
        self._learn(model, X, y)
        self.model_ = model
        self._sync()
        return self

    def partial_fit(self, X, y, classes=None):
        """Learns X, y as one more continual-learning task: the statistics
        of earlier tasks are kept exactly, λ is chosen by GCV on this task.
        ``classes`` (first call) fixes every class the tasks will bring
        (classes_); without it classes_ grows with the classes learned."""
        first = not hasattr(self, "model_")
        if first:
            X, model = self._input_new(X)
        else:
            X = self._input(X)
        X, y = self._validate_data(X, y, dtype=np.float32, order="C", reset=first)
        check_classification_targets(y)
        if first:
            self._fixed = None
            self._names = {}
            if classes is not None:
                self._fixed = np.unique(np.asarray(classes))
            if model is None:
                model = self._new_model(X.shape[1], self._extractor())
        else:
            model = self.model_
        if self._fixed is not None:
            bad = np.setdiff1d(np.unique(y), self._fixed)
            if len(bad):
                raise ValueError(f"y holds classes {bad.tolist()} not in the classes given to the first partial_fit")
        self._learn(model, X, y)
        self.model_ = model
        self._sync()
        return self

    def _learn(self, model, X, y):
        labels, idx = np.unique(y, return_inverse=True)
        names = []
        for lab in labels.tolist():
            name = class_name(lab)
            other = self._names.get(name, lab)
            if other != lab or type(other) is not type(lab):
                raise ValueError(f"labels {other!r} and {lab!r} have the same name {name!r}")
            names.append(name)
        model.learn_indexed(X, idx, names)
        for name, lab in zip(names, labels.tolist()):
            self._names[name] = lab

    def forget(self, label, X=None):
        """Removes the class ``label``: exactly with X (the features of every
        sample it learned), or from the features the model's history of
        learns holds; else only its column goes. It leaves classes_.
        Returns True for an exact removal."""
        check_is_fitted(self)
        if X is not None:
            X = self._validate_data(self._input(X), dtype=np.float32, order="C", reset=False)
        exact = self.model_.forget(class_name(label), X)
        self._names.pop(class_name(label), None)
        if self._fixed is not None:
            self._fixed = self._fixed[self._fixed != label]
        self._sync()
        return exact

    def unlearn(self):
        """Takes the last fit/partial_fit back out exactly (up to the last
        forget); the classes it added go."""
        check_is_fitted(self)
        self.model_.unlearn()
        self._sync()
        return self

    def _sync(self):
        """classes_, the column maps and the temperature after a change."""
        model = self.model_
        info = model.info()
        names = info["classes"]
        labels = [self._names.get(n, n) for n in names]
        if self._fixed is not None:
            classes = self._fixed
        else:
            classes = np.array(sorted(labels))
        self.classes_ = np.asarray(classes)
        pos = {v: i for i, v in enumerate(self.classes_.tolist())}
        # column j of the model's scores is class _col_cls[j] of classes_
        self._col_cls = np.array([pos[v] for v in labels], dtype=np.intp)
        self._identity = len(labels) == len(self.classes_) and bool(np.all(self._col_cls == np.arange(len(labels))))
        rej = info.get("rejection") or {}
        t = rej.get("temperature") or 0.0
        self.temperature_ = float(t) if t > 0 else 1.0
        self.lambda_ = float(info["lambda"])

    # ---- predicting ----

    def _scores(self, X):
        check_is_fitted(self)
        X = self._validate_data(self._input(X), dtype=np.float32, order="C", reset=False)
        return self.model_.scores(X)

    def _class_scores(self, s, fill):
        if self._identity:
            return s
        out = np.full((s.shape[0], len(self.classes_)), fill, dtype=s.dtype)
        out[:, self._col_cls] = s
        return out

    def decision_function(self, X):
        """The class scores, n x len(classes_) (columns in classes_ order;
        -inf for a class not learned yet); for two classes the score of
        classes_[1] less that of classes_[0], as scikit-learn expects. The
        scores are those of ``flycl predict``, bit for bit."""
        s = self._class_scores(self._scores(X), -np.inf)
        if len(self.classes_) == 2:
            return s[:, 1] - s[:, 0]
        return s

    def predict(self, X):
        """The class of highest score (ties: the class learned first)."""
        s = self._scores(X)
        return self.classes_[self._col_cls[np.argmax(s, axis=1)]]

    def predict_proba(self, X):
        """softmax(scores / T) with the temperature T the model calibrated
        when it learned (temperature_; 1 when it has none), columns in
        classes_ order (0 for a class not learned yet)."""
        s = self._scores(X).astype(np.float64) / self.temperature_
        s -= s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=1, keepdims=True)
        return self._class_scores(s, 0.0)

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def answer(self, X, rejection="auto", unknown="unknown"):
        """The answers as ``flycl predict`` gives them: (labels, Answers),
        labels holding ``unknown`` where the model's rejection says a sample
        is none of its classes; rejection: "auto", "off" or a threshold."""
        check_is_fitted(self)
        X = self._validate_data(self._input(X), dtype=np.float32, order="C", reset=False)
        a = self.model_.answer(X, rejection=rejection)
        labels = self.classes_[self._col_cls[a.classes]].astype(object)
        labels[a.unknown] = unknown
        return labels, Answers(self._col_cls[a.classes], a.unknown, a.probability, a.margin)

    # ---- files and pickling ----

    def save(self, path):
        """Writes the model file (``flycl serve``/``predict`` read it)."""
        check_is_fitted(self)
        self.model_.save(path)

    @classmethod
    def load(cls, path):
        """An estimator around a model file (``flycl learn``'s or save's);
        its classes are the file's class names."""
        return cls._around(Model.load(path))

    @classmethod
    def _around(cls, model):
        cfg = model.config
        est = cls(**{k: cfg[k] for k in CONFIG_KEYS if k in cfg})
        pipe = model.info().get("pipeline") or {}
        est.backbone = pipe.get("backbone") or None
        est._fixed = None
        est._names = {}
        est.model_ = model
        est.n_features_in_ = model.input_dim
        est._sync()
        return est

    def __getstate__(self):
        state = super().__getstate__()
        if "_extractor_" in state:  # reopened from the model when needed
            state = dict(state)
            del state["_extractor_"]
        if "model_" in state:
            state = dict(state)
            state["model_"] = state["model_"].to_bytes()
        return state

    def __setstate__(self, state):
        if isinstance(state.get("model_"), (bytes, bytearray)):
            state = dict(state)
            state["model_"] = Model.from_bytes(state["model_"])
        super().__setstate__(state)

    def _more_tags(self):
        return {"preserves_dtype": [np.float32]}
