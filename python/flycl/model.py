"""flycl.Model: one Fly-CL model of libflycl, numpy in and out."""

import ctypes
import json
import os
import time
from collections import namedtuple
from ctypes import byref, c_double, c_int, c_int64, c_size_t, c_uint64, c_void_p

import numpy as np

from . import _lib
from ._lib import model_t

# The keys of flycl.Config, as flycl_model_new takes them.
CONFIG_KEYS = ("m", "p", "k", "seed", "topk", "lambdas", "gcv", "gcv_scope", "projection",
               "lambda_scale", "widen_grid")

Answers = namedtuple("Answers", "classes unknown probability margin")
Answers.__doc__ = """The answers of Model.answer: ``classes`` the top class's index per
sample (int32), ``unknown`` True where the model's rejection answers "unknown",
``probability`` the calibrated probability of the top class (NaN without a
calibration), ``margin`` the open-set score less the threshold (negative:
unknown; NaN when rejection is off)."""


def as_features(x, d=None, name="x"):
    """x as a C-contiguous float32 n x d numpy array, without a copy when it
    is one already (a float32 C-contiguous array, or a CPU torch tensor of
    one). A 1-D x is one sample."""
    if type(x).__module__.split(".")[0] == "torch":
        if x.device.type != "cpu":
            raise TypeError(f"{name}: a torch tensor on {x.device}; move it to the CPU first (.cpu())")
        x = x.detach().numpy()
    a = np.asarray(x)
    if a.dtype != np.float32 or not a.flags.c_contiguous:
        if a.dtype.kind not in "fiub":
            raise TypeError(f"{name}: features must be numbers, got dtype {a.dtype}")
        a = np.ascontiguousarray(a, dtype=np.float32)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2:
        raise ValueError(f"{name}: features must be n x d, got shape {a.shape}")
    if d is not None and a.shape[1] != d:
        raise ValueError(f"{name}: {a.shape[1]} features per sample, the model takes {d}")
    return a


def _addr(a):
    return a.__array_interface__["data"][0]


class Model:
    """A Fly-CL model (a handle to libflycl's).

    ``Model(d, m=10000, p=300, k=3000, ...)`` creates an untrained model for
    d-dimensional features; the keywords are flycl.Config's fields (the keys
    of a model file's header): m, p, k, seed, topk ("signed"/"magnitude"),
    lambdas (the GCV grid), gcv, gcv_scope ("task"/"all"), projection,
    lambda_scale ("absolute"/"relative"), widen_grid. Left out: flycl's
    defaults (the paper's, as ``flycl learn``).

    Classes are named (strings); they are numbered 0..c-1 in the order the
    model first learned them, the column order of ``scores``. Every method
    that takes features takes an n x d array (numpy, or a CPU torch tensor);
    a float32 C-contiguous array is passed to the library without a copy.

    Reading methods (scores, top, answer, the properties) may run
    concurrently from several threads; learn, forget and unlearn wait for
    them (libflycl's lock per model).
    """

    def __init__(self, d, **config):
        unknown = set(config) - set(CONFIG_KEYS)
        if unknown:
            raise TypeError(f"flycl.Model: unknown configuration {sorted(unknown)} (known: {', '.join(CONFIG_KEYS)})")
        cfg = {k: (list(map(float, v)) if k == "lambdas" else v)
               for k, v in config.items() if v is not None}
        h = model_t(0)
        _lib.call(_lib.lib().flycl_model_new, json.dumps(cfg).encode(), int(d), byref(h))
        self._h = h.value
        self._d = int(d)

    @classmethod
    def _wrap(cls, h):
        self = cls.__new__(cls)
        self._h = h
        d = c_int64(0)
        _lib.call(_lib.lib().flycl_model_input_dim, h, byref(d))
        self._d = d.value
        return self

    @classmethod
    def load(cls, path):
        """Reads a model file (``flycl learn``'s, ``flycl serve``'s or
        ``save``'s), its journal's changes replayed; the learns its journal
        holds can be taken back with unlearn. The file is only read."""
        h = model_t(0)
        _lib.call(_lib.lib().flycl_model_load, _lib.cpath(path), byref(h))
        return cls._wrap(h.value)

    @classmethod
    def from_bytes(cls, b):
        """A model from the bytes of a model file (``to_bytes``)."""
        b = bytes(b)
        h = model_t(0)
        _lib.call(_lib.lib().flycl_model_load_bytes, b, len(b), byref(h))
        return cls._wrap(h.value)

    def save(self, path):
        """Writes a new model file at path (atomically and durably, in the
        format ``flycl learn`` writes, so that ``flycl serve`` and
        ``flycl predict`` read it). An existing path is refused
        (ModelFileError): remove it and its .journal first."""
        _lib.call(_lib.lib().flycl_model_save, self._h, _lib.cpath(path))

    def to_bytes(self):
        """The bytes of the model file ``save`` would write."""
        p = c_void_p()
        n = c_size_t(0)
        lib = _lib.lib()
        _lib.call(lib.flycl_model_save_bytes, self._h, byref(p), byref(n))
        try:
            return ctypes.string_at(p, n.value)
        finally:
            lib.flycl_free(p)

    def close(self):
        """Frees the model now (it is also freed when garbage-collected)."""
        h, self._h = getattr(self, "_h", 0), 0
        if h and _lib._lib is not None:
            _lib.lib().flycl_model_free(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- learning ----

    def learn(self, x, y, lam=0.0, batch=0):
        """Learns the samples x (n x d) with labels y (n class names, or any
        labels, named by str(); new classes are added in the order of their
        sorted labels): one task, λ by GCV on it (``flycl learn``),
        or a fixed λ ``lam`` > 0; with ``batch`` > 0 online mini-batches of
        that size, re-solved after each. Returns the λ of the classifier
        after the learn. The rejection ("unknown") and probabilities are
        recalibrated. Refused input leaves the model unchanged."""
        labels, idx = np.unique(np.asarray(y).ravel(), return_inverse=True)
        names = [str(v) for v in labels.tolist()]
        if len(set(names)) != len(names):
            raise ValueError("y: two different labels have the same name (str)")
        return self.learn_indexed(x, idx, names, lam=lam, batch=batch)

    def learn_indexed(self, x, y, names, lam=0.0, batch=0):
        """learn with y as int32 indices into the list of class names
        ``names`` (the C call's own form: no conversion of the labels)."""
        x = as_features(x)
        ya = np.asarray(y).ravel()
        if ya.size and ya.dtype.kind not in "iub":
            if ya.dtype.kind != "f" or not np.all(np.isfinite(ya)) or np.any(ya != np.round(ya)):
                raise TypeError(f"y: class indices must be integers, got dtype {ya.dtype}")
        if ya.size and (ya.min() < 0 or ya.max() >= len(names)):
            # checked before the conversion to int32, which would wrap
            raise ValueError(f"y: class indices must be in [0, {len(names)}) (the names), "
                             f"got {ya.min()} to {ya.max()}")
        yi = np.ascontiguousarray(ya, dtype=np.int32)
        if len(yi) != x.shape[0]:
            raise ValueError(f"y: {len(yi)} labels for {x.shape[0]} samples")
        arr = _lib.c_strings([str(n) for n in names])
        out = c_double(0)
        _lib.call(_lib.lib().flycl_learn, self._h, _addr(x), x.shape[0], x.shape[1], _addr(yi),
                  arr, len(names), float(lam), int(batch), byref(out))
        return out.value

    def forget(self, name, x=None):
        """Removes the class called name. With x, the features of every
        sample it learned, the removal is exact; without, the model uses the
        features its history of learns holds when it holds them all, else
        only drops the class's column. Returns True for an exact removal."""
        exact = c_int(0)
        if x is None:
            _lib.call(_lib.lib().flycl_forget, self._h, _lib.cstr(str(name), "class name"), None, 0, self._d,
                      byref(exact))
        else:
            x = as_features(x)
            _lib.call(_lib.lib().flycl_forget, self._h, _lib.cstr(str(name), "class name"), _addr(x), x.shape[0],
                      x.shape[1], byref(exact))
        return bool(exact.value)

    def use_extractor(self, extractor):
        """Records on the model that its features come from extractor (an
        Extractor), so that a saved model serves images (``flycl serve``,
        ``flycl predict IMAGE``); before the first learn."""
        _lib.call(_lib.lib().flycl_model_use_extractor, self._h, extractor._h)

    def unlearn(self):
        """Takes the last learn back out exactly (``flycl undo``); repeated,
        the learns before it, up to the last forget. NoUndoError when none
        is left."""
        _lib.call(_lib.lib().flycl_unlearn, self._h)

    # ---- predicting ----

    def scores(self, x):
        """The n x c class scores (float32), columns in class-index order;
        bit for bit those of ``flycl predict`` and the Go Predictor."""
        x = as_features(x)
        lib = _lib.lib()
        n = x.shape[0]
        c = c_int64(0)
        _lib.call(lib.flycl_model_num_classes, self._h, byref(c))
        # Another thread may learn or forget a class before the scores are
        # read: the library says how many columns it wrote (or needs), read
        # under the model's lock with them, so the shape always matches.
        while True:
            want = c.value
            out = np.empty(n * want, dtype=np.float32)
            st = lib.flycl_scores_n(self._h, _addr(x), n, x.shape[1], _addr(out), out.size, byref(c))
            if st != _lib.E_BUFFER:
                break
        _lib.check(st)
        return out[:n * c.value].reshape(n, c.value)

    def top(self, x, k=5):
        """The k best classes of each sample, best first: (indices n x k
        int32, scores n x k float32); -1 and NaN beyond the classes."""
        x = as_features(x)
        n = x.shape[0]
        cls = np.empty((n, k), dtype=np.int32)
        sc = np.empty((n, k), dtype=np.float32)
        _lib.call(_lib.lib().flycl_top, self._h, _addr(x), n, x.shape[1], int(k), _addr(cls), _addr(sc), n * k)
        return cls, sc

    def predict(self, x):
        """The top class's index of each sample (int32)."""
        return self.answer(x, rejection="off").classes

    def answer(self, x, rejection="auto"):
        """The answer of each sample as ``flycl predict`` gives it (Answers):
        the top class, whether it is "unknown", its calibrated probability
        and the open-set margin. rejection: "auto" (the model's calibrated
        threshold), "off", or a threshold (a number)."""
        x = as_features(x)
        n = x.shape[0]
        cls = np.empty(n, dtype=np.int32)
        unk = np.empty(n, dtype=np.int32)
        prob = np.empty(n, dtype=np.float64)
        margin = np.empty(n, dtype=np.float64)
        rej = None if rejection is None else (rejection if isinstance(rejection, str) else repr(float(rejection)))
        _lib.call(_lib.lib().flycl_answer, self._h, _addr(x), n, x.shape[1],
                  None if rej is None else _lib.cstr(rej, "rejection"), _addr(cls), _addr(unk), _addr(prob), _addr(margin))
        return Answers(cls, unk.astype(bool), prob, margin)

    # ---- reading ----

    @property
    def input_dim(self):
        """d, the feature dimension."""
        return self._d

    @property
    def num_classes(self):
        c = c_int64(0)
        _lib.call(_lib.lib().flycl_model_num_classes, self._h, byref(c))
        return c.value

    @property
    def classes(self):
        """The class names in class-index order (the columns of scores)."""
        lib = _lib.lib()
        return [_lib.get_string(lib.flycl_model_class_name, self._h, i) for i in range(self.num_classes)]

    def class_index(self, name):
        """The index of the class called name (UnknownClassError if none)."""
        i = c_int64(0)
        _lib.call(_lib.lib().flycl_model_class_index, self._h, _lib.cstr(str(name), "class name"), byref(i))
        return i.value

    @property
    def lambda_(self):
        """λ of the current classifier (0 before any learn)."""
        v = c_double(0)
        _lib.call(_lib.lib().flycl_model_lambda, self._h, byref(v))
        return v.value

    @property
    def samples(self):
        """The samples in the statistics."""
        v = c_int64(0)
        _lib.call(_lib.lib().flycl_model_samples, self._h, byref(v))
        return v.value

    @property
    def history(self):
        """The task records, one dict per learning step, oldest first
        (samples, new_classes, classes, lambda, gcv, grid, seconds, ...;
        labels are the model's internal ones, see info()["labels"])."""
        return json.loads(_lib.get_string(_lib.lib().flycl_model_history_json, self._h))

    def info(self):
        """The model as a dict: d, config, classes, labels, counts, samples,
        lambda, version, rejection, pipeline."""
        return json.loads(_lib.get_string(_lib.lib().flycl_model_info_json, self._h))

    @property
    def config(self):
        """The configuration (defaults filled in), as Model() takes it."""
        return self.info()["config"]

    def __repr__(self):
        if not self._h:
            return "<flycl.Model closed>"
        return f"<flycl.Model d={self._d} classes={self.num_classes} samples={self.samples} lambda={self.lambda_:g}>"


def timed_learn(model, x, y, **kw):
    """model.learn(x, y) and its wall time in seconds (τ_post of the task:
    the features are given, nothing is extracted)."""
    t = time.perf_counter()
    lam = model.learn(x, y, **kw)
    return lam, time.perf_counter() - t


class Extractor:
    """An image feature extractor of libflycl: a backbone (``flycl learn
    --backbone``'s spec: "mobilenetv2", "squeezenet", "mobilenetv2:DIR",
    an .onnx file, ...) through ONNX Runtime, with its exact preprocessing.

    ``models_dir``: the folder of backbone weights (None: the weights built
    into the library); ``ort_library``: libonnxruntime.so (None: the one
    flycl finds as ``flycl learn`` does: $FLYCL_ORT_LIB, else the copy the
    wheel or ``make install`` puts beside libflycl)."""

    def __init__(self, backbone="mobilenetv2", models_dir=None, ort_library=None, _model=None):
        h = c_uint64(0)
        dim = c_int64(0)
        enc = (lambda s: None if s is None else _lib.cpath(s))
        if _model is not None:
            _lib.call(_lib.lib().flycl_extractor_for_model, _model._h, enc(models_dir), enc(ort_library),
                      byref(h), byref(dim))
        else:
            _lib.call(_lib.lib().flycl_extractor_open, enc(backbone), enc(models_dir), enc(ort_library),
                      byref(h), byref(dim))
        self._h = h.value
        self.dim = dim.value

    @classmethod
    def for_model(cls, model, models_dir=None, ort_library=None):
        """The extractor a trained model's features came from (its pipeline)."""
        return cls(None, models_dir, ort_library, _model=model)

    def features(self, paths):
        """The n x dim float32 features of the image files at paths."""
        paths = [os.fspath(p) for p in paths]
        out = np.empty((len(paths), self.dim), dtype=np.float32)
        arr = (ctypes.c_char_p * max(len(paths), 1))(*[_lib.cpath(p) for p in paths])
        _lib.call(_lib.lib().flycl_extract_files, self._h, arr, len(paths), _addr(out), out.size)
        return out

    def close(self):
        h, self._h = getattr(self, "_h", 0), 0
        if h and _lib._lib is not None:
            _lib.lib().flycl_extractor_free(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
