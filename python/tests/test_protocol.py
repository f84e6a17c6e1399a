"""flycl.protocol and the example script against ``flycl-lab run``: the same
class order, the same λ per task and the same accuracy matrix, on synthetic
features and on CIFAR-10 features of ../shared's images when present."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import flycl.protocol
from conftest import ROOT, blobs, run_cli

EXAMPLE = ROOT / "python" / "examples" / "paper_protocol.py"
sys.path.insert(0, str(ROOT / "python" / "bench"))


def example_env():
    """The environment the example runs in: this package first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    return env


def test_class_order_is_the_reference_codes():
    # the official code's CIFAR-100 order: random.seed(1993);
    # random.sample(range(100), 100) (../shared/reference/class_orders.json)
    order = flycl.protocol.class_order(100, 1993, "flycl")
    assert sorted(order) == list(range(100))
    ref = ROOT.parent / "shared" / "reference" / "class_orders.json"
    if not ref.exists():
        pytest.skip("no ../shared/reference/class_orders.json")
    want = json.loads(ref.read_text())["flycl_official_python_random_sample"]["cifar100_seed1993"]
    assert order == want


def compare_with_flycl_run(tmp_path, train, test, tasks, cfg, example=True):
    """Runs the protocol in Python and with flycl-lab run; asserts they agree."""
    np.savez(tmp_path / "train.npz", features=train[0], labels=train[1])
    np.savez(tmp_path / "test.npz", features=test[0], labels=test[1])
    lam = ",".join(repr(float(v)) for v in cfg["lambdas"])
    run_cli("run", "--train", tmp_path / "train.npz", "--test", tmp_path / "test.npz", "--tasks", tasks,
            "--order", "flycl", "--seeds", 1993, "--methods", "flycl", "--m", cfg["m"], "--p", cfg["p"],
            "--k", cfg["k"], "--lambdas", lam, "--out", tmp_path / "run", "--quiet")
    res = json.loads((tmp_path / "run" / "result.json").read_text())["runs"][0]

    exp = flycl.protocol.Experiment(train[0], train[1], test[0], test[1], tasks=tasks, order="flycl",
                                    seed=1993, **cfg).run()
    assert [list(t) for t in exp.tasks] == res["tasks"]
    assert [r.lambda_ for r in exp.results] == res["lambdas"]
    correct, total = res["matrix"]["correct"], res["matrix"]["total"]
    want = [[c / total[i] for i, c in enumerate(row)] for row in correct]
    assert [r.accuracies for r in exp.results] == want
    assert [r.gcv for r in exp.results] == [c["scores"] for c in res["lambda_choices"]]

    if example:  # the shipped script prints the same numbers
        out = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path / "train.npz"), str(tmp_path / "test.npz"),
                              "--tasks", str(tasks), "--m", str(cfg["m"]), "--p", str(cfg["p"]), "--k", str(cfg["k"]),
                              "--lambdas", lam], capture_output=True, text=True, check=True, env=example_env()).stdout
        lines = out.strip().splitlines()
        assert len(lines) == tasks + 1
        for r, line in zip(exp.results, lines):
            assert f"lambda {r.lambda_:g} " in line and f"A_t {100 * r.A_t:.2f}%" in line
        assert f"A_T {100 * exp.A_T:.2f}%" in lines[-1]
    return exp


def test_protocol_equals_flycl_run_synthetic(tmp_path):
    x, y, means = blobs(10, 40, 40, seed=5, spread=1.3)
    r = np.random.default_rng(6)
    yt = np.repeat(np.arange(10), 15)
    xt = (means[yt] + r.normal(scale=1.3, size=(len(yt), 40))).astype(np.float32)
    cfg = dict(m=500, p=20, k=150, lambdas=[1e-2, 1e-1, 1, 10, 100, 1e3, 1e4, 1e5])
    exp = compare_with_flycl_run(tmp_path, (x, y), (xt, yt), 5, cfg)
    assert 0.3 < exp.A_T < 1  # a run that is neither trivial nor broken
    assert len({r.lambda_ for r in exp.results}) > 1  # GCV's choice varies


def test_protocol_equals_flycl_run_cifar10(tmp_path):
    import shared_cifar10
    try:
        train, test = shared_cifar10.features(50, 20)
    except shared_cifar10.Unavailable as e:
        pytest.skip(f"CIFAR-10 features of ../shared: {e}")
    cfg = dict(m=2000, p=300, k=600, lambdas=[1e2, 1e3, 1e4, 1e5, 1e6])
    exp = compare_with_flycl_run(tmp_path, (train["features"], train["labels"]),
                                 (test["features"], test["labels"]), 5, cfg)
    assert exp.A_T > 0.5  # MobileNetV2 features separate CIFAR-10 well above chance (10%)
