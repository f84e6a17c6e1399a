"""flycl against the official Fly-CL code's algorithm in PyTorch, side by side.

    PYTHONPATH=python python3 python/bench/torch_vs_flycl.py [--train-per-class 500 --test-per-class 100]

On CIFAR-10 features of ../shared's images (MobileNetV2, 1280-d, made once by
``flycl extract``, see shared_cifar10.py), the paper's protocol: 5 tasks of 2
classes in the official code's order for seed 1993, m = 10000, p = 300,
k = 3000. Each task is learned by flycl (``flycl.Model.learn`` from Python)
and by torch_flycl.TorchFlyCL (torch sparse W, thin-SVD GCV on the task,
Cholesky; float32, on the CPU), alternately, with the same W (``flycl
export-w``). Prints per task the λ each chose, the seconds each took
(τ_post), and at the end how many test predictions agree and both
accuracies.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import flycl
import flycl.protocol
import shared_cifar10
from torch_flycl import TorchFlyCL

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-per-class", type=int, default=500)
    ap.add_argument("--test-per-class", type=int, default=100)
    ap.add_argument("--m", type=int, default=10000)
    ap.add_argument("--p", type=int, default=300)
    ap.add_argument("--k", type=int, default=3000)
    ap.add_argument("--tasks", type=int, default=5)
    ap.add_argument("--lambdas", default="1e2,1e3,1e4,1e5,1e6,1e7")
    a = ap.parse_args()
    # ATen's own loops (sparse mm, top-k) on every core, as OpenBLAS's
    # (which both use through Debian's libblas.so.3) are; Debian's torch
    # starts with one OpenMP thread where the machine is shared
    torch.set_num_threads(os.cpu_count())
    lambdas = [float(v) for v in a.lambdas.split(",")]
    train, test = shared_cifar10.features(a.train_per_class, a.test_per_class)
    x, y = train["features"], train["labels"]
    xt, yt = test["features"], test["labels"]
    d = x.shape[1]
    flycl_bin = os.environ.get("FLYCL_BIN") or str(ROOT / "bin" / "flycl")
    w = pathlib.Path(tempfile.mkdtemp()) / "w.npz"
    subprocess.run([flycl_bin, "export-w", "--m", str(a.m), "--d", str(d), "--p", str(a.p), "--w-seed", "0",
                    "--out", str(w)], check=True, capture_output=True)
    wz = np.load(w)
    print(f"CIFAR-10 MobileNetV2 features: {len(x)} train, {len(xt)} test, d={d}; m={a.m} p={a.p} k={a.k}, "
          f"grid {a.lambdas}; python {sys.version.split()[0]}, numpy {np.__version__}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads, BLAS {os.path.realpath('/usr/lib/x86_64-linux-gnu/libblas.so.3')}); OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    tasks = flycl.protocol.Experiment(x, y, xt, yt, tasks=a.tasks, order="flycl", seed=1993, m=a.m).tasks
    model = flycl.Model(d, m=a.m, p=a.p, k=a.k, seed=0, lambdas=lambdas)
    ref = TorchFlyCL(wz["indices"], wz["values"], d, a.k, lambdas)
    print("\ntask  classes   λ flycl   λ torch   flycl (s)   torch (s)   torch/flycl")
    tf = tt = 0.0
    for t, cls in enumerate(tasks):
        sel = np.isin(y, cls)
        xs, ys = np.ascontiguousarray(x[sel]), y[sel]
        t0 = time.perf_counter()
        lf = model.learn(xs, ys)
        t1 = time.perf_counter()
        lt = ref.learn_task(xs, ys)
        t2 = time.perf_counter()
        tf, tt = tf + (t1 - t0), tt + (t2 - t1)
        print(f"{t + 1:4d}  {str(cls):8s}  {lf:8.0e}  {lt:8.0e}  {t1 - t0:10.2f}  {t2 - t1:10.2f}  {(t2 - t1) / (t1 - t0):12.2f}")
    seen = np.isin(yt, sum(tasks, []))
    names = np.asarray(model.classes)
    pf = np.array([int(v) for v in names[model.predict(xt[seen])]])
    pt = ref.predict(xt[seen])
    print(f"total        {tf:10.2f}  {tt:10.2f}  {tt / tf:12.2f}")
    print(f"\npredictions equal on {np.sum(pf == pt)} of {len(pf)} test samples; accuracy flycl "
          f"{100 * np.mean(pf == yt[seen]):.2f}%, torch {100 * np.mean(pt == yt[seen]):.2f}%")


if __name__ == "__main__":
    main()
