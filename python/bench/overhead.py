"""What the Python layer costs, Python and Go side by side in one run.

    PYTHONPATH=python python3 python/bench/overhead.py [--m 10000 --n 5000 --tasks 2 --calls 2000]

1. τ_post at the CIFAR-100 scale of ``flycl-lab bench engine`` (d = 768,
   tasks of 5000 samples of 10 classes, m = 10000, p = 300, k = 3000, the
   default grid): each task learned through ``flycl.Model.learn`` from
   Python, with the time inside the C call (flycl_learn) separated from the
   Python layer around it (argument checks, labels to names, ctypes); then
   the same tasks learned by ``flycl.Model.Learn`` (one task) in Go (gobench, a
   separate process run by this script, on the same features).
2. A single-vector predict: ``flycl.Model.scores`` of one row from Python
   (and the bare ctypes call), against ``Predictor.Scores`` of one row in Go
   (gobench), on the same model file and rows; medians over --calls calls.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import flycl
from flycl import _lib
from flycl.model import _addr

ROOT = pathlib.Path(__file__).resolve().parents[2]


def data(n_tasks, per_task, classes_per_task, d, seed=1):
    r = np.random.default_rng(seed)
    C = n_tasks * classes_per_task
    means = r.normal(size=(C, d)).astype(np.float32)
    y = np.concatenate([np.repeat(np.arange(t * classes_per_task, (t + 1) * classes_per_task),
                                  per_task // classes_per_task) for t in range(n_tasks)])
    x = (means[y] + r.normal(size=(len(y), d))).astype(np.float32)
    return x, y.astype(np.int32)


class CallTimer:
    """Wraps flycl._lib.call to time the C function calls it makes."""

    def __init__(self):
        self.seconds = {}
        self._call = _lib.call

    def __enter__(self):
        def call(fn, *args):
            t = time.perf_counter()
            st = fn(*args)
            dt = time.perf_counter() - t
            name = getattr(fn, "__name__", "?")
            self.seconds[name] = self.seconds.get(name, 0.0) + dt
            _lib.check(st)
        _lib.call = call
        return self

    def __exit__(self, *exc):
        _lib.call = self._call


_gobench = []


def gobench(*args):
    exe = pathlib.Path(tempfile.gettempdir()) / "flycl-gobench"
    if not _gobench:
        subprocess.run(["go", "build", "-o", str(exe), "./python/bench/gobench"], cwd=ROOT, check=True)
        _gobench.append(exe)
    out = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def learn(a, model, x, y, tmp, cfg):
    """τ_post of a.tasks tasks from Python (the Python layer separated from
    the C call), then the same tasks in Go (gobench)."""
    rows = []
    for t in range(a.tasks):
        xs, ys = x[t * a.n:(t + 1) * a.n], y[t * a.n:(t + 1) * a.n]
        with CallTimer() as ct:
            t0 = time.perf_counter()
            model.learn(xs, ys)
            wall = time.perf_counter() - t0
        c = ct.seconds["flycl_learn"]
        stages = sum(model.history[-1].get("seconds", {}).values())
        rows.append((wall, c, stages))
    go = gobench("learn", "-x", tmp / "x.f32", "-y", tmp / "y.i32", "-d", a.d, "-tasks", a.tasks,
                 "-config", json.dumps(cfg))
    print("\ntask  Python wall (s)  in flycl_learn (s)  Python layer (ms)  layer/τ_post  stages (s)  Go Learn (s)  Python/Go")
    for t, ((wall, c, st), g) in enumerate(zip(rows, go["seconds"])):
        print(f"{t + 1:4d}  {wall:15.3f}  {c:18.3f}  {1e3 * (wall - c):17.3f}  {100 * (wall - c) / c:11.4f}%"
              f"  {st:13.3f}  {g:16.3f}  {wall / g:9.3f}")
    lw = sum(r[0] - r[1] for r in rows)
    print(f"Python layer: {1e3 * lw / a.tasks:.3f} ms per task = {100 * lw / sum(r[1] for r in rows):.4f}% of τ_post "
          f"(target <= 3%); side by side with Go: {sum(r[0] for r in rows) / sum(go['seconds']):.3f}x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=10000)
    ap.add_argument("--p", type=int, default=300)
    ap.add_argument("--k", type=int, default=3000)
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--n", type=int, default=5000, help="samples per task")
    ap.add_argument("--classes", type=int, default=10, help="classes per task")
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--skip-learn", action="store_true", help="only the predict (on a model of one task)")
    a = ap.parse_args()
    cfg = dict(m=a.m, p=a.p, k=a.k)
    x, y = data(a.tasks, a.n, a.classes, a.d)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="flycl-overhead-"))
    x.tofile(tmp / "x.f32")
    y.tofile(tmp / "y.i32")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; d={a.d} m={a.m} p={a.p} k={a.k}, "
          f"{a.tasks} tasks of {a.n} samples, {a.classes} classes each; OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")

    # 1. τ_post
    model = flycl.Model(a.d, **cfg)
    if a.skip_learn:
        model.learn(x[:a.n], y[:a.n])
    else:
        learn(a, model, x, y, tmp, cfg)

    # 2. single-vector predict
    path = tmp / "model.flycl"
    model.save(path)
    q = x[:256]
    one = [np.ascontiguousarray(q[i:i + 1]) for i in range(len(q))]
    lib = _lib.lib()
    c = model.num_classes
    out = np.empty((1, c), dtype=np.float32)
    model.scores(one[0])
    # Rounds alternate Python and Go, so that a change of the machine's
    # load falls on both; within a round each Python call is paired with a
    # bare ctypes call of the same row, in the same loop.
    rounds = 5
    per = a.calls // rounds
    py, raw, go_med, go_min = [], [], [], []
    for _ in range(rounds):
        for i in range(per):
            xi = one[i % len(one)]
            if i % 2:  # which of the pair goes first alternates
                t0 = time.perf_counter()
                model.scores(xi)
                t1 = time.perf_counter()
                lib.flycl_scores(model._h, _addr(xi), 1, a.d, _addr(out), c)
                t2 = time.perf_counter()
                py.append(t1 - t0)
                raw.append(t2 - t1)
            else:
                t0 = time.perf_counter()
                lib.flycl_scores(model._h, _addr(xi), 1, a.d, _addr(out), c)
                t1 = time.perf_counter()
                model.scores(xi)
                t2 = time.perf_counter()
                raw.append(t1 - t0)
                py.append(t2 - t1)
        g = gobench("scores", "-model", path, "-x", tmp / "x.f32", "-d", a.d, "-n", per)
        go_med.append(g["median_s"])
        go_min.append(g["min_s"])
    py, raw = np.array(py), np.array(raw)
    pm, rm, gm = np.median(py), np.median(raw), float(np.median(go_med))
    print(f"\nsingle-vector predict ({c} classes), medians of {rounds} x {per} calls, Python and Go alternating:")
    print(f"  Go Predictor.Scores      {1e6 * gm:9.1f} µs  (medians of the rounds: "
          f"{', '.join(f'{1e6 * v:.0f}' for v in go_med)})")
    print(f"  ctypes flycl_scores      {1e6 * rm:9.1f} µs  ({rm / gm:.3f}x Go)")
    print(f"  flycl.Model.scores       {1e6 * pm:9.1f} µs  ({pm / gm:.3f}x Go; target <= 1.5x)")
    print(f"  Python layer per call    {1e6 * (pm - rm):9.1f} µs  (Model.scores less the bare ctypes call; median of "
          f"the paired differences {1e6 * np.median(py - raw):.1f} µs); Python less Go: {1e6 * (pm - gm):.1f} µs")
    gmin = min(go_min)
    print(f"  fastest call (the least disturbed by other jobs): Go {1e6 * gmin:.1f} µs, ctypes {1e6 * raw.min():.1f} µs, "
          f"Model.scores {1e6 * py.min():.1f} µs ({py.min() / gmin:.3f}x Go)")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
