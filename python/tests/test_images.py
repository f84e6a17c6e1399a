"""Images to features from Python (flycl.Extractor): the same features as
``flycl extract``, bit for bit, and a model that records its pipeline so
that ``flycl predict`` classifies image files with it."""

import json
import os

import numpy as np
import pytest

import flycl
from conftest import ROOT, run_cli, flycl_bin

ORT = os.environ.get("FLYCL_ORT_LIB") or str(
    ROOT / ".cache" / "onnxruntime" / "node_modules" / "onnxruntime-node" / "bin" / "napi-v6" / "linux" / "x64"
    / "libonnxruntime.so.1")


def images(tmp_path):
    """A few CIFAR-10 JPEGs of ../shared (or skip), as class folders."""
    import sys
    sys.path.insert(0, str(ROOT / "python" / "bench"))
    import shared_cifar10
    if not os.path.exists(ORT):
        pytest.skip(f"no ONNX Runtime at {ORT} (make ort, or FLYCL_ORT_LIB)")
    try:
        train, _ = shared_cifar10.features(50, 20)
    except shared_cifar10.Unavailable as e:
        pytest.skip(f"CIFAR-10 images of ../shared: {e}")
    return train


def test_extractor_equals_flycl_extract(tmp_path):
    train = images(tmp_path)
    pick = np.r_[0:4, 50:54]  # 4 airplanes, 4 automobiles
    paths = [str(p) for p in train["paths"][pick]]
    with flycl.Extractor("mobilenetv2", ort_library=ORT) as e:
        assert e.dim == 1280
        f = e.features(paths)
    assert f.tobytes() == train["features"][pick].tobytes()


def test_a_model_with_a_pipeline_predicts_images(tmp_path):
    train = images(tmp_path)
    e = flycl.Extractor("mobilenetv2", ort_library=ORT)
    m = flycl.Model(e.dim, m=500, p=300, k=150, lambdas=[1e2, 1e3, 1e4, 1e5])
    m.use_extractor(e)
    names = np.asarray(train["class_names"])
    sel = np.isin(train["labels"], [0, 1, 2])
    m.learn(train["features"][sel], names[train["labels"][sel]])
    p = tmp_path / "images.flycl"
    m.save(p)
    img = str(train["paths"][5])
    out = json.loads(run_cli("predict", "--model", p, img, "--format", "json", "--top", 3, "--quiet",
                             "--ort-lib", ORT))
    top = out["predictions"][0]["top"]
    s = m.scores(e.features([img]))[0]
    assert [r["name"] for r in top] == [m.classes[i] for i in np.argsort(-s, kind="stable")[:3]]
    assert [np.float32(r["score"]) for r in top] == sorted(s.tolist(), reverse=True)[:3]
    e2 = flycl.Extractor.for_model(m, ort_library=ORT)
    assert e2.features([img]).tobytes() == e.features([img]).tobytes()
