"""Shared helpers of the Python package's tests.

Run from python/ (``PYTHONPATH=. python3 -m pytest tests``) or through
``go test ./python`` (make test), which builds libflycl.so, bin/flycl and
bin/flycl-lab into a temporary folder and passes them as $FLYCL_LIB and $FLYCL_BIN.
"""

import json
import os
import pathlib
import struct
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def flycl_bin():
    """The flycl command built from this tree ($FLYCL_BIN, else bin/flycl)."""
    p = os.environ.get("FLYCL_BIN") or str(ROOT / "bin" / "flycl")
    if not os.path.exists(p):
        pytest.skip(f"no flycl command at {p}: build it (make build: bin/flycl and bin/flycl-lab, which flycl runs the research commands through) or set FLYCL_BIN")
    return p


def run_cli(*args, cwd=None):
    """Runs flycl with args; returns its stdout (fails the test on an error)."""
    r = subprocess.run([flycl_bin(), *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"flycl {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def blobs(n_classes, d, per_class, seed, spread=1.0, sep=1.0):
    """Gaussian classes: features (float32, C-contiguous) and integer labels.
    Class means ~ N(0, sep^2 I), samples ~ N(mean, spread^2 I)."""
    r = np.random.default_rng(seed)
    means = r.normal(scale=sep, size=(n_classes, d))
    y = np.repeat(np.arange(n_classes), per_class)
    x = (means[y] + r.normal(scale=spread, size=(len(y), d))).astype(np.float32)
    return x, y, means


def read_model_file(path_or_bytes):
    """A model file's header (dict) and the binary part after it (G, S, C,
    W when explicit; the CRC and end mark are left out), per modelfile's
    format: magic, version, header length, JSON header, payload, crc, end."""
    b = path_or_bytes if isinstance(path_or_bytes, bytes) else pathlib.Path(path_or_bytes).read_bytes()
    assert b[:8] == b"FLYCLMDL" and b[-8:] == b"FLYCLEND", "not a model file"
    hlen = struct.unpack("<I", b[12:16])[0]
    header = json.loads(b[16:16 + hlen])
    return header, b[16 + hlen:-12]


# Header fields that differ between two saves of the same model: when it
# was created and saved, its random identity, and the measured stage times.
VOLATILE = ("created", "saved", "id")


def stable_header(h):
    h = {k: v for k, v in h.items() if k not in VOLATILE}
    h["history"] = [{k: v for k, v in rec.items() if k != "seconds"} for rec in h.get("history", [])]
    return h
