"""Images as FlyCLClassifier(backbone=...) takes them: file paths, PIL
images (when Pillow is installed) or uint8 arrays (H x W x 3 RGB, H x W x 4
RGBA or H x W grey), turned into the file paths libflycl's extractor reads.

libflycl decodes files itself (the exact preprocessing of ``flycl learn``),
so an image in memory is written as a lossless PNG into a temporary folder
first: the pixels the extractor sees are exactly the array's. The PNG
writer is the format's minimum (zlib from the standard library), so that
arrays need nothing beyond numpy.
"""

import os
import struct
import tempfile
import zlib

import numpy as np


def _chunk(kind, data):
    c = struct.pack(">I", len(data)) + kind + data
    return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(a):
    """The PNG file of the uint8 image a (H x W grey, H x W x 1, x 3 RGB or
    x 4 RGBA), losslessly."""
    a = np.asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"an image array must be uint8 (0-255), got dtype {a.dtype}")
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim == 2:
        colour = 0
    elif a.ndim == 3 and a.shape[2] in (3, 4):
        colour = 2 if a.shape[2] == 3 else 6
    else:
        raise ValueError(f"an image array must be H x W, H x W x 3 or H x W x 4, got shape {a.shape}")
    h, w = a.shape[0], a.shape[1]
    if h == 0 or w == 0:
        raise ValueError(f"an empty image ({h} x {w})")
    a = np.ascontiguousarray(a)
    rows = a.reshape(h, -1)
    raw = np.zeros((h, rows.shape[1] + 1), dtype=np.uint8)  # filter 0 per row
    raw[:, 1:] = rows
    ihdr = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + \
        _chunk(b"IEND", b"")


def _is_pil(x):
    return type(x).__module__.split(".")[0] == "PIL" and hasattr(x, "save") and hasattr(x, "mode")


def is_images(X):
    """Whether X is a sequence of images (paths, PIL images or uint8
    arrays) rather than a feature matrix."""
    if isinstance(X, (str, bytes, os.PathLike)):
        return False
    if isinstance(X, np.ndarray):
        # a uint8 batch N x H x W (x C) of images; 2-D arrays are features
        return X.dtype == np.uint8 and X.ndim >= 3
    if not isinstance(X, (list, tuple)):
        # a sparse matrix, a data frame, a tensor: features, for the
        # estimator's own validation to take or refuse
        return False
    if not X:
        return False
    first = X[0]
    return isinstance(first, (str, os.PathLike)) or _is_pil(first) or \
        (isinstance(first, np.ndarray) and first.dtype == np.uint8 and first.ndim >= 2)


class ImageFiles:
    """The file paths of the images X, as a context manager: those in
    memory are written as PNG files into a temporary folder that goes when
    it closes."""

    def __init__(self, X):
        self._tmp = None
        self.paths = []
        for i, x in enumerate(X):
            if isinstance(x, (str, os.PathLike)):
                self.paths.append(os.fspath(x))
                continue
            if _is_pil(x):
                data = None
                img = x if x.mode in ("RGB", "RGBA", "L") else x.convert("RGB")
            elif isinstance(x, np.ndarray):
                data = png_bytes(x)
                img = None
            else:
                raise TypeError(f"image {i}: a path, a PIL image or a uint8 array, got {type(x).__name__}")
            if self._tmp is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="flycl-images-")
            p = os.path.join(self._tmp.name, f"{i}.png")
            if img is not None:
                img.save(p, format="PNG")
            else:
                with open(p, "wb") as f:
                    f.write(data)
            self.paths.append(p)
        if not self.paths:
            raise ValueError("no images given")

    def __enter__(self):
        return self.paths

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
