"""FlyCLClassifier(backbone=...): images in (paths, uint8 arrays, PIL
images when Pillow is there), features through libflycl's extractor, and a
saved model that the flycl command classifies image files with."""

import json
import os
import pickle
import zlib

import numpy as np
import pytest

import flycl
from flycl.images import ImageFiles, is_images, png_bytes
from conftest import ROOT, run_cli

ORT = os.environ.get("FLYCL_ORT_LIB") or str(
    ROOT / ".cache" / "onnxruntime" / "node_modules" / "onnxruntime-node" / "bin" / "napi-v6" / "linux" / "x64"
    / "libonnxruntime.so.1")


def draw(kind, seed, size=64):
    """A uint8 RGB picture of stripes or a disc, with noise."""
    r = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size]
    if kind == "stripes":
        mask = ((xx + r.integers(0, 8)) // 6) % 2 == 0
    else:
        cy, cx = r.integers(size // 3, 2 * size // 3, size=2)
        mask = (yy - cy) ** 2 + (xx - cx) ** 2 < (size // 4) ** 2
    img = np.where(mask[..., None], r.integers(150, 255, size=3), r.integers(0, 90, size=3))
    img = img + r.integers(0, 20, size=img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def test_png_bytes_hold_the_pixels():
    # the PNG format's own layout (RFC 2083): IHDR's size and colour type,
    # and the IDAT stream, inflated, is each row prefixed by filter 0
    for a, colour in ((draw("disc", 1, 17), 2), (draw("disc", 2, 9)[:, :, 0], 0),
                      (np.dstack([draw("stripes", 3, 5), np.full((5, 5), 7, np.uint8)]), 6)):
        b = png_bytes(a)
        assert b[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = int.from_bytes(b[16:20], "big"), int.from_bytes(b[20:24], "big")
        assert (h, w) == a.shape[:2] and b[24] == 8 and b[25] == colour
        idat = b.index(b"IDAT")
        n = int.from_bytes(b[idat - 4:idat], "big")
        raw = np.frombuffer(zlib.decompress(b[idat + 4:idat + 4 + n]), np.uint8).reshape(h, -1)
        assert (raw[:, 0] == 0).all()
        assert raw[:, 1:].tobytes() == np.ascontiguousarray(a).tobytes()
    with pytest.raises(TypeError):
        png_bytes(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError):
        png_bytes(np.zeros((4, 4, 2), np.uint8))


def test_is_images():
    assert is_images(["a.jpg"]) and is_images([draw("disc", 1)]) and is_images(np.zeros((2, 8, 8, 3), np.uint8))
    assert not is_images(np.zeros((2, 8), np.float32)) and not is_images(np.zeros((2, 8), np.uint8))
    assert not is_images([[0.5, 1.0]]) and not is_images("a.jpg")


def test_images_need_a_backbone():
    x = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    clf = flycl.FlyCLClassifier(m=50, p=4, k=10).fit(x, [0, 1] * 3)
    with pytest.raises(ValueError, match="backbone"):
        clf.predict([draw("disc", 1)])


def test_classifier_learns_images_and_its_file_serves_them(tmp_path):
    if not os.path.exists(ORT) and not os.environ.get("FLYCL_ORT_LIB"):
        pytest.skip(f"no ONNX Runtime at {ORT} (make ort)")
    kinds = ["stripes", "disc"]
    train = [draw(kinds[i % 2], 10 + i) for i in range(8)]
    labels = [kinds[i % 2] for i in range(8)]
    held = [draw(kinds[i % 2], 100 + i) for i in range(4)]
    files = []
    for i, a in enumerate(held):
        p = tmp_path / f"held{i}.png"
        p.write_bytes(png_bytes(a))
        files.append(p)
    clf = flycl.FlyCLClassifier(backbone="mobilenetv2", m=500, k=150, lambdas=[1e1, 1e2, 1e3, 1e4])
    clf.fit(train[:4] + [str(p) for p in _write(tmp_path, train[4:])], labels)
    assert clf.n_features_in_ == 1280
    # arrays and the files holding the same pixels give the same scores
    by_array = clf.decision_function(held)
    by_path = clf.decision_function(files)
    assert by_array.tobytes() == by_path.tobytes()
    # the features are the extractor's own
    with flycl.Extractor("mobilenetv2") as e, ImageFiles(held) as paths:
        feats = e.features(paths)
    assert clf.decision_function(feats).tobytes() == by_array.tobytes()
    got = clf.predict(held)
    assert list(got) == [kinds[i % 2] for i in range(4)]

    # the saved file records the backbone: flycl predict classifies the
    # image files with it, with the scores Python computed
    model = tmp_path / "images.flycl"
    clf.save(model)
    out = json.loads(run_cli("predict", "--model", model, *files, "--format", "json", "--top", 2, "--quiet"))
    for i, pred in enumerate(out["predictions"]):
        assert pred["top"][0]["name"] == got[i]
    assert "mobilenetv2" in run_cli("info", model)

    # loaded and pickled, it still takes images
    again = flycl.FlyCLClassifier.load(model)
    assert again.backbone == "mobilenetv2"
    assert again.decision_function(held).tobytes() == by_array.tobytes()
    back = pickle.loads(pickle.dumps(clf))
    assert back.decision_function(files).tobytes() == by_array.tobytes()


def test_new_model_made_during_extraction_is_the_features_one():
    # fit and a first partial_fit on images make the model while the
    # images are extracted (in a thread): the model fit on their features
    # makes, bit for bit; a configuration refused is the same error, and
    # a y of the wrong length still the check's, not the model's
    if not os.path.exists(ORT) and not os.environ.get("FLYCL_ORT_LIB"):
        pytest.skip(f"no ONNX Runtime at {ORT} (make ort)")
    kinds = ["stripes", "disc"]
    train = [draw(kinds[i % 2], 40 + i) for i in range(6)]
    labels = [kinds[i % 2] for i in range(6)]
    with flycl.Extractor("mobilenetv2") as e, ImageFiles(train) as paths:
        feats = e.features(paths)
    opts = dict(m=400, k=120, lambdas=[1e1, 1e2, 1e3])
    want = flycl.FlyCLClassifier(**opts).fit(feats, labels).decision_function(feats)
    got = flycl.FlyCLClassifier(backbone="mobilenetv2", **opts).fit(train, labels)
    assert got.decision_function(feats).tobytes() == want.tobytes()
    got = flycl.FlyCLClassifier(backbone="mobilenetv2", **opts).partial_fit(train, labels)
    assert got.decision_function(feats).tobytes() == want.tobytes()

    bad = dict(opts, k=500)  # k > m
    with pytest.raises(Exception) as by_features:
        flycl.FlyCLClassifier(**bad).fit(feats, labels)
    with pytest.raises(Exception) as by_images:
        flycl.FlyCLClassifier(backbone="mobilenetv2", **bad).fit(train, labels)
    assert type(by_images.value) is type(by_features.value) and str(by_images.value) == str(by_features.value)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        flycl.FlyCLClassifier(backbone="mobilenetv2", **bad).fit(train, labels[:5])


def _write(tmp_path, arrays):
    out = []
    for i, a in enumerate(arrays):
        p = tmp_path / f"train{i}.png"
        p.write_bytes(png_bytes(a))
        out.append(p)
    return out


def test_pil_images(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    # Pillow's own decoder reads the pixels back from both the file
    # written from a PIL image and the one this package's PNG writer made
    a = draw("disc", 5)
    with ImageFiles([Image.fromarray(a)]) as paths, ImageFiles([a]) as paths2:
        for p in (paths[0], paths2[0]):
            with Image.open(p) as im:
                assert np.asarray(im.convert("RGB")).tobytes() == a.tobytes()
