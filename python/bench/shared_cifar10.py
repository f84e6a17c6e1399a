"""CIFAR-10 features from ../shared's images (for tests and benchmarks).

``features(n_train, n_test)`` copies the first n_train training and n_test
test JPEGs of every class out of ../shared/data/cifar10-jpeg.tar.gz into
out/python-cifar10-N-M/<split>/<class>/ and runs ``flycl extract`` on them
(MobileNetV2, 1280-d, through ONNX Runtime), once: the .npz files are kept
there and reused. Returns (train, test) as dicts of numpy arrays, or raises
Unavailable when ../shared, the flycl command or ONNX Runtime is missing.
"""

import os
import pathlib
import subprocess
import tarfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAR = ROOT.parent / "shared" / "data" / "cifar10-jpeg.tar.gz"


class Unavailable(Exception):
    pass


def features(n_train, n_test, flycl=None, backbone="mobilenetv2"):
    flycl = flycl or os.environ.get("FLYCL_BIN") or str(ROOT / "bin" / "flycl")
    out = ROOT / "out" / f"python-cifar10-{backbone}-{n_train}-{n_test}"
    tr, te = out / "features" / "train.npz", out / "features" / "test.npz"
    if not (tr.exists() and te.exists()):
        if not TAR.exists():
            raise Unavailable(f"no {TAR}")
        if not os.path.exists(flycl):
            raise Unavailable(f"no flycl command at {flycl}")
        want = {"train": n_train, "test": n_test}
        got = {}
        imgs = out / "images"
        with tarfile.open(TAR) as tf:
            for mem in tf:
                parts = mem.name.split("/")
                if not mem.isfile() or len(parts) != 3 or parts[0] not in want:
                    continue
                key = (parts[0], parts[1])
                if got.get(key, 0) >= want[parts[0]]:
                    continue
                got[key] = got.get(key, 0) + 1
                dst = imgs / parts[0] / parts[1] / parts[2]
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(tf.extractfile(mem).read())
                if len(got) == 20 and all(got[k] >= want[k[0]] for k in got):
                    break
        r = subprocess.run([flycl, "extract", "--data", f"folder:{imgs}", "--backbone", backbone,
                            "--out", str(out / "features"), "--cache", "", "--quiet"],
                           capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            msg = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
            if "onnxruntime" in r.stderr.lower() or "ort" in msg.lower():
                raise Unavailable(f"flycl extract: {msg}")
            raise RuntimeError(f"flycl extract: {r.stderr}")
    return dict(np.load(tr)), dict(np.load(te))
