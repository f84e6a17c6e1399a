"""The Fly-CL paper's class-incremental experiment on features in numpy.

    python3 paper_protocol.py train.npz test.npz [--tasks 5] [--m 10000] [--k 3000] [--lambdas 1e4,...]

train.npz/test.npz: ``features`` (n x d) and ``labels`` (n), e.g. from
``flycl extract`` or ``numpy.savez``. The experiment itself is the ten lines
after the argument parsing.
"""
import argparse

import numpy as np

import flycl.protocol

ap = argparse.ArgumentParser()
ap.add_argument("train"), ap.add_argument("test")
ap.add_argument("--tasks", type=int, default=5), ap.add_argument("--seed", type=int, default=1993)
ap.add_argument("--m", type=int, default=10000), ap.add_argument("--p", type=int, default=300)
ap.add_argument("--k", type=int, default=3000), ap.add_argument("--lambdas", default="1e6,1e7,1e8,1e9")
a = ap.parse_args()

train, test = np.load(a.train), np.load(a.test)
run = flycl.protocol.Experiment(train["features"], train["labels"], test["features"], test["labels"],
                                tasks=a.tasks, order="flycl", seed=a.seed, m=a.m, p=a.p, k=a.k,
                                lambdas=[float(v) for v in a.lambdas.split(",")])
for r in run:
    print(f"task {r.task + 1}: classes {r.classes}  lambda {r.lambda_:g}  "
          f"A_t {100 * r.A_t:.2f}%  tau_post {r.tau_post:.3f} s")
print(f"A_T {100 * run.A_T:.2f}%  A_bar {100 * run.A_bar:.2f}%  BWT {100 * run.bwt:.2f}  "
      f"tau_post {run.tau_post:.3f} s/task")
