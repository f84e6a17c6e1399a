"""ctypes bindings of libflycl (the C interface in cmd/libflycl/flycl.h).

The shared library is looked for, in order, at $FLYCL_LIB, then beside this
file (where ``make python`` puts it). ctypes is in the standard library, so
the package needs nothing beyond numpy and no C compiler at install time,
and the per-call cost it adds is a few microseconds (docs/PYTHON.md says why
it was chosen and measures that cost).
"""

import ctypes
import os
import threading
from ctypes import (POINTER, byref, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_uint64, c_void_p)

ABI_VERSION = 2

model_t = c_uint64
extractor_t = c_uint64


class FlyCLError(Exception):
    """An error libflycl reported: ``status`` is its code (FLYCL_E_*),
    ``name`` the code's name, and the message says what and where."""

    def __init__(self, status, name, message):
        super().__init__(f"{message} ({name})" if message else name)
        self.status = status
        self.name = name
        self.message = message


# The status codes of flycl.h and the Python exceptions they also are, so
# that callers can catch the usual types (ValueError for input that does not
# fit, KeyError for an unknown class name, OSError for files).
OK = 0
E_BAD_INPUT = 1
E_NOT_TRAINED = 2
E_UNKNOWN_CLASS = 3
E_TOO_LARGE = 4
E_CLASS_NAME = 5
E_NO_UNDO = 6
E_HANDLE = 7
E_BUFFER = 8
E_CONFIG = 9
E_IO = 10
E_FORMAT = 11
E_LOCKED = 12
E_EXISTS = 13
E_BACKBONE = 14
E_NULL = 15
E_FAILED = 16
E_INTERNAL = 99


class BadInputError(FlyCLError, ValueError):
    """Input that does not fit the model (FLYCL_E_BAD_INPUT, E_TOO_LARGE)."""


class NotTrainedError(FlyCLError, ValueError):
    """The model has learned no class yet (FLYCL_E_NOT_TRAINED)."""


class UnknownClassError(FlyCLError, KeyError):
    """A class name the model does not have (FLYCL_E_UNKNOWN_CLASS)."""

    def __str__(self):  # KeyError quotes its argument; keep the message plain
        return Exception.__str__(self)


class ClassNameError(FlyCLError, ValueError):
    """A class name flycl refuses (FLYCL_E_CLASS_NAME)."""


class NoUndoError(FlyCLError, LookupError):
    """No learn left to take back (FLYCL_E_NO_UNDO)."""


class ConfigError(FlyCLError, ValueError):
    """An invalid configuration (FLYCL_E_CONFIG)."""


class ModelFileError(FlyCLError, OSError):
    """A file that cannot be read or written, or is not a model file, or is
    locked by another writer, or exists (FLYCL_E_IO, E_FORMAT, E_LOCKED,
    E_EXISTS)."""


class FailedError(FlyCLError, RuntimeError):
    """An operation that failed for another reason (FLYCL_E_FAILED): the
    message says which (a solve that cannot factor, a file system error)."""


class BackboneError(FlyCLError, RuntimeError):
    """An image extractor that cannot be opened or run (FLYCL_E_BACKBONE)."""


_ERRORS = {
    E_BAD_INPUT: BadInputError, E_TOO_LARGE: BadInputError,
    E_NOT_TRAINED: NotTrainedError, E_UNKNOWN_CLASS: UnknownClassError,
    E_CLASS_NAME: ClassNameError, E_NO_UNDO: NoUndoError, E_CONFIG: ConfigError,
    E_IO: ModelFileError, E_FORMAT: ModelFileError, E_LOCKED: ModelFileError,
    E_EXISTS: ModelFileError, E_BACKBONE: BackboneError, E_FAILED: FailedError,
}

# Arrays are passed by address (numpy's __array_interface__), which costs
# less per call than building ctypes pointer objects.
_F = c_void_p
_I32 = c_void_p
_D = c_void_p

# name: (restype, argtypes)
_SIGNATURES = {
    "flycl_abi_version": (c_int, []),
    "flycl_last_error": (c_int, [c_char_p, c_size_t, POINTER(c_size_t)]),
    "flycl_status_name": (c_char_p, [c_int]),
    "flycl_free": (None, [c_void_p]),
    "flycl_model_new": (c_int, [c_char_p, c_int64, POINTER(model_t)]),
    "flycl_model_load": (c_int, [c_char_p, POINTER(model_t)]),
    "flycl_model_load_bytes": (c_int, [c_char_p, c_size_t, POINTER(model_t)]),
    "flycl_model_save": (c_int, [model_t, c_char_p]),
    "flycl_model_save_bytes": (c_int, [model_t, POINTER(c_void_p), POINTER(c_size_t)]),
    "flycl_model_free": (c_int, [model_t]),
    "flycl_learn": (c_int, [model_t, _F, c_int64, c_int64, _I32, POINTER(c_char_p), c_int64,
                            c_double, c_int64, _D]),
    "flycl_forget": (c_int, [model_t, c_char_p, _F, c_int64, c_int64, POINTER(c_int)]),
    "flycl_unlearn": (c_int, [model_t]),
    "flycl_scores": (c_int, [model_t, _F, c_int64, c_int64, _F, c_size_t]),
    "flycl_scores_n": (c_int, [model_t, _F, c_int64, c_int64, _F, c_size_t, POINTER(c_int64)]),
    "flycl_top": (c_int, [model_t, _F, c_int64, c_int64, c_int32, _I32, _F, c_size_t]),
    "flycl_answer": (c_int, [model_t, _F, c_int64, c_int64, c_char_p, _I32, _I32, _D, _D]),
    "flycl_model_input_dim": (c_int, [model_t, POINTER(c_int64)]),
    "flycl_model_num_classes": (c_int, [model_t, POINTER(c_int64)]),
    "flycl_model_class_name": (c_int, [model_t, c_int64, c_char_p, c_size_t, POINTER(c_size_t)]),
    "flycl_model_class_index": (c_int, [model_t, c_char_p, POINTER(c_int64)]),
    "flycl_model_lambda": (c_int, [model_t, _D]),
    "flycl_model_samples": (c_int, [model_t, POINTER(c_int64)]),
    "flycl_model_history_json": (c_int, [model_t, c_char_p, c_size_t, POINTER(c_size_t)]),
    "flycl_model_info_json": (c_int, [model_t, c_char_p, c_size_t, POINTER(c_size_t)]),
    "flycl_extractor_open": (c_int, [c_char_p, c_char_p, c_char_p, POINTER(extractor_t),
                                     POINTER(c_int64)]),
    "flycl_extractor_for_model": (c_int, [model_t, c_char_p, c_char_p, POINTER(extractor_t),
                                          POINTER(c_int64)]),
    "flycl_extract_files": (c_int, [extractor_t, POINTER(c_char_p), c_int64, _F, c_size_t]),
    "flycl_model_use_extractor": (c_int, [model_t, extractor_t]),
    "flycl_extractor_free": (c_int, [extractor_t]),
}

_lock = threading.Lock()
_lib = None


def library_path():
    """Where the shared library is looked for: $FLYCL_LIB, else
    libflycl.so beside this module (``make python`` puts it there)."""
    env = os.environ.get("FLYCL_LIB")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libflycl.so")


def lib():
    """The loaded library, its functions' signatures declared (loaded once)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        path = library_path()
        if not os.path.exists(path):
            raise ImportError(
                f"flycl: the shared library {path} is missing: run `make python` in the "
                "flycl repository (it builds libflycl.so with Go and puts it in python/flycl/), "
                "then install the package again, or set FLYCL_LIB to a libflycl.so")
        so = ctypes.CDLL(path)
        for name, (res, args) in _SIGNATURES.items():
            fn = getattr(so, name)
            fn.restype, fn.argtypes = res, args
        v = so.flycl_abi_version()
        if v < ABI_VERSION:
            raise ImportError(f"flycl: {path} has interface version {v}, this package needs {ABI_VERSION}")
        _lib = so
    return _lib


def last_error():
    n = c_size_t(0)
    buf = ctypes.create_string_buffer(1024)
    lib().flycl_last_error(buf, len(buf), byref(n))
    if n.value >= len(buf):
        buf = ctypes.create_string_buffer(n.value + 1)
        lib().flycl_last_error(buf, len(buf), byref(n))
    return buf.value.decode("utf-8", "replace")


def check(status):
    """Raises the FlyCLError of a status that is not FLYCL_OK."""
    if status == OK:
        return
    name = lib().flycl_status_name(status).decode()
    raise _ERRORS.get(status, FlyCLError)(status, name, last_error())


def call(fn, *args):
    check(fn(*args))


def get_string(fn, *args):
    """A string output (buf, cap, len) of fn(*args, buf, cap, &len), sized
    on a second call when the first buffer is too small."""
    n = c_size_t(0)
    buf = ctypes.create_string_buffer(256)
    st = fn(*args, buf, len(buf), byref(n))
    if st == E_BUFFER:
        buf = ctypes.create_string_buffer(n.value + 1)
        st = fn(*args, buf, len(buf), byref(n))
    check(st)
    return buf.raw[:n.value].decode("utf-8")


def cstr(s, what):
    """s (str) as the UTF-8 bytes of a C string; a NUL byte in it, which C
    would read as the string's end, is refused (ValueError)."""
    b = s.encode("utf-8")
    if b"\0" in b:
        raise ValueError(f"{what} {s!r}: contains a NUL byte")
    return b


def cpath(p, what="path"):
    """A path (str, bytes or os.PathLike) as the bytes of a C string; a NUL
    byte in it is refused (ValueError), as open() refuses it."""
    b = os.fsencode(p)
    if b"\0" in b:
        raise ValueError(f"{what} {p!r}: contains a NUL byte")
    return b


def c_strings(strs, what="class name"):
    """A NULL-free char*[] of UTF-8 strings (kept alive by the returned
    array); a string with a NUL byte is refused (ValueError)."""
    enc = [cstr(s, what) for s in strs]
    arr = (c_char_p * max(len(enc), 1))(*enc)
    return arr
