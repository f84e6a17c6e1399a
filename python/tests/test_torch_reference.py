"""The PyTorch implementation of python/bench (written as the official
Fly-CL code is) against flycl on the same W: the same λ per task, and the
same predictions wherever flycl's top two scores are not a near tie."""

import sys

import numpy as np
import pytest

import flycl
from conftest import ROOT, blobs, run_cli

torch = pytest.importorskip("torch")
sys.path.insert(0, str(ROOT / "python" / "bench"))
from torch_flycl import TorchFlyCL  # noqa: E402


def test_torch_reference_agrees(tmp_path):
    d, m, p, k = 40, 800, 16, 240
    lambdas = [1e-1, 1, 10, 100, 1e3, 1e4, 1e5]
    x, y, means = blobs(8, d, 40, seed=11, spread=1.2)
    r = np.random.default_rng(12)
    yt = np.repeat(np.arange(8), 25)
    xt = (means[yt] + r.normal(scale=1.2, size=(len(yt), d))).astype(np.float32)
    run_cli("export-w", "--m", m, "--d", d, "--p", p, "--w-seed", 0, "--out", tmp_path / "w.npz")
    w = np.load(tmp_path / "w.npz")
    ref = TorchFlyCL(w["indices"], w["values"], d, k, lambdas)
    model = flycl.Model(d, m=m, p=p, k=k, seed=0, lambdas=lambdas)
    for cls in ((0, 1), (2, 3), (4, 5), (6, 7)):
        sel = np.isin(y, cls)
        lam_ref = ref.learn_task(x[sel], y[sel])
        lam = model.learn(x[sel], y[sel])
        assert lam == lam_ref, f"task {cls}: flycl chose λ {lam}, the torch code {lam_ref}"
        # GCV scores: the torch code's float32 thin SVD against flycl's
        # exact method. A float32 singular vector of singular value s_i is
        # off by about u·s_max/s_i (u = 2^-24), and the smaller λ the more
        # the residual is made of those small-s_i directions: the error
        # grows as 1/λ (measured here: 2e-2 at λ = 0.1, 1e-3 at 1, 1.5e-4
        # at 10, 1e-5 at 100, 2e-6 above). Tolerance: 5e-5 + 5e-3/λ.
        got, want = np.array(model.history[-1]["gcv"]), np.array(ref.gcv_scores)
        assert np.all(np.abs(got - want) <= (5e-5 + 5e-3 / np.array(lambdas)) * np.abs(want))
    s = model.scores(xt)
    pred = np.array([int(c) for c in np.asarray(model.classes)[np.argmax(s, axis=1)]])
    pred_ref = ref.predict(xt)
    # Both compute the same scores in float32 along different paths (sgemm
    # vs torch.sparse.mm, a Cholesky of the same G + λI): they may differ by
    # some 1e-6 relative, so a prediction may differ only where the top two
    # scores are within 1e-4 of the largest score.
    top2 = np.sort(s, axis=1)[:, -2:]
    close = (top2[:, 1] - top2[:, 0]) < 1e-4 * np.abs(s).max()
    assert np.all((pred == pred_ref) | close)
    assert (pred == pred_ref).mean() > 0.99
    np.testing.assert_allclose(ref.scores(xt).numpy(), s[:, np.argsort([int(c) for c in model.classes])],
                               rtol=0, atol=1e-4 * np.abs(s).max())
