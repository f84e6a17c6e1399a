"""flycl.Model: the binding itself (arguments, copies, errors)."""

import pickle

import numpy as np
import pytest

import flycl
from conftest import blobs, read_model_file, stable_header

CFG = dict(m=300, p=16, k=90, lambdas=[1e-1, 1, 10, 100, 1e3])


def trained(d=32, classes=4, seed=1):
    x, y, _ = blobs(classes, d, 30, seed)
    m = flycl.Model(d, **CFG)
    m.learn(x, y)
    return m, x, y


def test_features_are_passed_without_a_copy():
    x = np.zeros((5, 8), dtype=np.float32)
    assert flycl.as_features(x) is x
    ro = x.copy()
    ro.setflags(write=False)
    assert flycl.as_features(ro) is ro  # read-only arrays (memory maps) too
    f64 = x.astype(np.float64)
    assert not np.shares_memory(flycl.as_features(f64), f64)  # float64 must be converted
    fortran = np.asfortranarray(np.arange(40, dtype=np.float32).reshape(5, 8))
    c = flycl.as_features(fortran)
    assert c.flags.c_contiguous and np.array_equal(c, fortran)


def test_torch_tensors_are_accepted_without_a_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    a = flycl.as_features(t)
    assert np.shares_memory(a, t.numpy())
    t.requires_grad_(True)
    assert flycl.as_features(t).shape == (3, 4)


def test_scores_of_torch_equal_numpy():
    torch = pytest.importorskip("torch")
    m, x, _ = trained()
    assert np.array_equal(m.scores(torch.from_numpy(x)), m.scores(x))


def test_learn_and_read():
    m, x, y = trained()
    assert m.classes == ["0", "1", "2", "3"]
    assert m.samples == len(x)
    assert m.lambda_ in CFG["lambdas"]
    s = m.scores(x)
    assert s.shape == (len(x), 4) and s.dtype == np.float32
    assert np.array_equal(m.predict(x), np.argmax(s, axis=1))
    cls, sc = m.top(x, 2)
    assert np.array_equal(cls[:, 0], np.argmax(s, axis=1))
    assert np.array_equal(sc[:, 0], s.max(axis=1))
    h = m.history
    assert len(h) == 1 and h[0]["samples"] == len(x) and h[0]["lambda"] == m.lambda_
    info = m.info()
    assert info["config"]["m"] == CFG["m"] and info["classes"] == m.classes


def test_a_sample_scores_alone():
    # each sample's scores depend on it alone, to the bit
    m, x, _ = trained()
    s = m.scores(x)
    for i in (0, 7, len(x) - 1):
        assert np.array_equal(m.scores(x[i]), s[i:i + 1])


def test_errors_are_typed():
    m, x, y = trained()
    with pytest.raises(flycl.BadInputError) as e:
        m.scores(np.zeros((2, 5), dtype=np.float32))
    assert isinstance(e.value, ValueError)
    with pytest.raises(flycl.UnknownClassError):
        m.class_index("no such class")
    with pytest.raises(flycl.ClassNameError):
        m.learn(x[:2], ["", ""])
    with pytest.raises(flycl.ConfigError):
        flycl.Model(8, k=0.5)
    with pytest.raises(TypeError):
        flycl.Model(8, q=3)
    empty = flycl.Model(8, m=50, p=4, k=10)
    with pytest.raises(flycl.NotTrainedError):
        empty.scores(np.zeros((1, 8), dtype=np.float32))
    with pytest.raises(flycl.NoUndoError):
        empty.unlearn()


def test_refused_learn_leaves_the_model_unchanged():
    m, x, y = trained()
    before = m.to_bytes()
    bad = x[:4].copy()
    bad[1, 3] = np.nan
    with pytest.raises(flycl.BadInputError):  # a NaN feature
        m.learn(bad, y[:4])
    hb, pb = read_model_file(before)
    ha, pa = read_model_file(m.to_bytes())
    assert stable_header(hb) == stable_header(ha) and pb == pa


def test_unlearn_restores_the_previous_model():
    m, x, y = trained()
    before = m.scores(x)
    x2, y2, _ = blobs(2, x.shape[1], 20, 9)
    m.learn(x2, y2 + 10)
    assert m.num_classes == 6
    m.unlearn()
    assert m.num_classes == 4
    # G comes back up to float32 rounding of the subtraction: the scores
    # agree to a few ulps of their scale (the classifier is re-solved).
    np.testing.assert_allclose(m.scores(x), before, rtol=0, atol=1e-4 * np.abs(before).max())


def test_bytes_round_trip():
    m, x, _ = trained()
    m2 = flycl.Model.from_bytes(m.to_bytes())
    assert np.array_equal(m2.scores(x), m.scores(x))
    assert m2.classes == m.classes and m2.lambda_ == m.lambda_
    with pytest.raises(flycl.ModelFileError):
        flycl.Model.from_bytes(b"not a model")


def test_save_refuses_an_existing_path(tmp_path):
    m, x, _ = trained()
    p = tmp_path / "a.flycl"
    m.save(p)
    with pytest.raises(flycl.ModelFileError):
        m.save(p)
    assert np.array_equal(flycl.Model.load(p).scores(x), m.scores(x))


def test_closed_model():
    m, x, _ = trained()
    m.close()
    with pytest.raises(flycl.FlyCLError):
        m.scores(x)


def test_concurrent_reads_from_threads():
    # reading calls run concurrently (ctypes releases the GIL during the
    # call; libflycl's lock per model lets reads share it): every thread
    # gets the scores one thread alone gets
    import threading
    m, x, _ = trained()
    want = m.scores(x)
    got, errors = [None] * 4, []

    def read(i):
        try:
            for _ in range(20):
                s = m.scores(x)
            got[i] = s
        except Exception as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=read, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert all(np.array_equal(g, want) for g in got)
