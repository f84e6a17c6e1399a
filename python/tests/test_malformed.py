"""Malformed calls raise a Python exception and leave the interpreter (and
the model) as they were: sizes no process could hold are refused before
Go allocates them (Go ends the process when an allocation fails), a NUL
byte that C would read as a string's end is refused instead of cutting the
string, and class indices are checked before numpy converts them to int32
(which wraps)."""

import threading

import numpy as np
import pytest

import flycl
from flycl import _lib

from conftest import read_model_file, stable_header


def small():
    x = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    m = flycl.Model(4, m=32, p=2, k=8, lambdas=[1, 10])
    m.learn(x, ["a", "b"] * 3)
    return m, x


def test_sizes_no_process_holds_are_refused_before_allocation():
    # W's column indices are int32: d beyond them is refused outright
    with pytest.raises(flycl.BadInputError, match="feature dimension is at most"):
        flycl.Model(2**40, m=10, p=1, k=1)
    # m = 2^20: the m×m statistics alone are 4 TiB
    with pytest.raises(flycl.BadInputError) as e:
        flycl.Model(8, m=2**20, p=1, k=1)
    assert e.value.status == _lib.E_TOO_LARGE and "memory available" in str(e.value)


def test_a_learn_larger_than_memory_is_refused():
    # 200,000 samples, each its own class: the learn's bound
    # (flycl.Model.LearnBytes) is 24 bytes per sample and class, 960 GB,
    # more than any machine this runs on has available
    m = flycl.Model(4, m=64, p=2, k=16)
    x = np.random.default_rng(1).normal(size=(200_000, 4)).astype(np.float32)
    with pytest.raises(flycl.BadInputError) as e:
        m.learn(x, np.arange(200_000))
    assert e.value.status == _lib.E_TOO_LARGE and "200000 samples with 200000 classes" in str(e.value)
    assert m.num_classes == 0 and m.samples == 0


@pytest.mark.parametrize("call", [
    lambda m, x, p: m.learn(x, ["a\0b"] * 6),
    lambda m, x, p: m.learn_indexed(x, [0] * 6, ["a\0"]),
    lambda m, x, p: m.forget("a\0zzz"),
    lambda m, x, p: m.class_index("a\0"),
    lambda m, x, p: m.answer(x, rejection="auto\0"),
    lambda m, x, p: m.save(str(p / "m\0.flycl")),
    lambda m, x, p: flycl.Model.load(str(p / "m\0.flycl")),
], ids=["learn", "learn_indexed", "forget", "class_index", "answer", "save", "load"])
def test_a_nul_byte_is_refused_not_cut(call, tmp_path):
    m, x = small()
    before = m.to_bytes()
    with pytest.raises(ValueError, match="NUL"):
        call(m, x, tmp_path)
    assert list(tmp_path.iterdir()) == []  # not saved under the name cut at the NUL
    hb, pb = read_model_file(before)
    ha, pa = read_model_file(m.to_bytes())
    assert stable_header(hb) == stable_header(ha) and pb == pa


@pytest.mark.parametrize("y,err", [
    ([2**32] * 6, ValueError),        # int32 would wrap it to 0
    ([2**31] * 6, ValueError),        # ... to -2^31
    ([-1] * 6, ValueError),
    ([2] * 6, ValueError),            # one past the names
    ([0.5] * 6, TypeError),           # int32 would truncate it to 0
    ([np.nan] * 6, TypeError),
], ids=["2^32", "2^31", "-1", "past the names", "0.5", "nan"])
def test_class_indices_out_of_range_are_refused(y, err):
    m, x = small()
    with pytest.raises(err, match="y: class indices"):
        m.learn_indexed(x, y, ["a", "b"])
    assert m.num_classes == 2 and m.samples == 6
    assert m.learn_indexed(x, np.array([0, 1] * 3, dtype=np.int64), ["a", "b"]) > 0  # in range: learned


def test_scores_while_another_thread_learns_new_classes():
    # scores' columns are the classes the library scored, read with the
    # scores under the model's lock: a learn of new classes between the
    # class count and the scores used to fail with E_BUFFER
    m, x = small()
    errors, shapes = [], []

    def learner():
        try:
            for i in range(150):
                m.learn(x[:2], [f"n{i}", f"n{i}b"])
        except Exception as e:  # reported below
            errors.append(e)

    t = threading.Thread(target=learner)
    t.start()
    while t.is_alive():
        try:
            s = m.scores(x)
            shapes.append(s.shape)
            assert np.all(np.isfinite(s))
        except Exception as e:  # reported below
            errors.append(e)
    t.join()
    assert not errors
    assert len(shapes) > 0 and all(n == 6 and 2 <= c <= 302 for n, c in shapes)
    assert m.scores(x).shape == (6, 302)
