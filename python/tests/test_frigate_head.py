"""The recipe's head of the Frigate benchmark (python/bench/frigate_head.py)
against what it reproduces: Keras's default initialisation and split, and
Adam's update (torch.optim.Adam is the same update when epsilon is 0)."""

import math
import pathlib
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "bench"))
import frigate_head as fh  # noqa: E402


@pytest.mark.parametrize("n,kept", [(1, 1), (3, 3), (4, 4), (5, 4), (9, 8), (10, 8), (11, 9)])
def test_training_rows_is_keras_split(n, kept):
    # Keras's DirectoryIterator with validation_split=0.2, subset="training"
    # keeps files [int(0.2 n), n) of each class; two classes interleaved
    y = np.array([0, 1] * n)
    rows = fh.training_rows(y)
    for c in (0, 1):
        mine = np.flatnonzero(y == c)
        assert rows[y[rows] == c].tolist() == mine[int(0.2 * n):].tolist()
        assert len(mine[int(0.2 * n):]) == kept


def test_head_shapes_and_keras_default_init():
    rng = np.random.default_rng(3)
    head = fh.Head(1280, 9, rng)
    w1, b1, w2, b2 = head.params
    assert tuple(w1.shape) == (1280, 128) and tuple(w2.shape) == (128, 9)
    assert not b1.any() and not b2.any()
    for w, fan_in, fan_out in ((w1, 1280, 128), (w2, 128, 9)):
        limit = math.sqrt(6 / (fan_in + fan_out))
        assert w.abs().max().item() <= limit
        # uniform on [-limit, limit]: variance limit^2 / 3, within 5 standard
        # errors of the sample variance (its sd is about limit^2 sqrt(4/45 / n))
        n = w.numel()
        se = limit**2 * math.sqrt(4 / 45 / n)
        assert abs(w.var().item() - limit**2 / 3) < 5 * se
    x = torch.zeros(4, 1280)
    assert tuple(head.logits(x).shape) == (4, 9)
    assert not head.logits(x).any()  # zero input, zero biases


def test_keras_adam_is_adam_without_epsilon(monkeypatch):
    # with epsilon 0, Keras's update lr sqrt(1-b2^t)/(1-b1^t) m/sqrt(v) is
    # torch's lr/(1-b1^t) m/(sqrt(v)/sqrt(1-b2^t)): the same up to rounding
    monkeypatch.setattr(fh, "EPSILON", 0.0)
    g = torch.Generator().manual_seed(0)
    a = torch.randn(50, 7, generator=g).requires_grad_()
    b = a.detach().clone().requires_grad_()
    mine = fh.KerasAdam([a])
    ref = torch.optim.Adam([b], lr=fh.LEARNING_RATE, betas=(fh.BETA_1, fh.BETA_2), eps=0.0)
    target = torch.randn(50, 7, generator=g)
    for _ in range(20):
        ((a - target) ** 3).sum().backward()
        mine.step()
        ref.zero_grad()
        ((b - target) ** 3).sum().backward()
        ref.step()
    # the two orders of operations round differently: at most about one
    # float32 ulp of the largest parameter per step (20 steps), far below
    # the lr = 1e-3 a step moves a parameter by (a wrong bias correction
    # or moment would differ by that much)
    ulp = torch.finfo(torch.float32).eps * b.abs().max().item()
    assert (a - b).abs().max().item() <= 20 * ulp
