"""flycl: Fly-CL continual learning, exact and fast, from Python.

A thin layer (ctypes, numpy) over libflycl, the C library of the Go
implementation: the same model, the same model files and the same numbers as
the ``flycl`` command.

* ``flycl.Model``: one model; learn a task, scores, answers with "unknown",
  forget, unlearn, save/load the flycl model file format.
* ``flycl.FlyCLClassifier``: the same as a scikit-learn estimator (needs
  scikit-learn; imported on first use).
* ``flycl.protocol``: the paper's class-incremental protocol on features in
  numpy (A_t, the chosen λ, τ_post per task).
"""

from ._lib import (BackboneError, BadInputError, ClassNameError, ConfigError, FailedError, FlyCLError,
                   ModelFileError, NoUndoError, NotTrainedError, UnknownClassError, library_path)
from .model import Answers, Extractor, Model, as_features

__version__ = "0.1.0"

__all__ = ["Model", "Extractor", "Answers", "FlyCLClassifier", "as_features", "library_path", "FlyCLError",
           "BadInputError", "NotTrainedError", "UnknownClassError", "ClassNameError",
           "NoUndoError", "ConfigError", "ModelFileError", "BackboneError", "FailedError", "protocol"]


def __getattr__(name):
    # scikit-learn and the protocol module are loaded on first use, so that
    # `import flycl` needs numpy alone.
    if name == "FlyCLClassifier":
        from .estimator import FlyCLClassifier
        return FlyCLClassifier
    if name == "protocol":
        from . import protocol
        return protocol
    raise AttributeError(f"module 'flycl' has no attribute {name!r}")
