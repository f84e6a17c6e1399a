"""The paper's class-incremental protocol on features already in numpy.

    run = Experiment(X_train, y_train, X_test, y_test, tasks=10, order="flycl", seed=1993, m=10000)
    for r in run:          # learns task t, then evaluates every task so far
        print(r.task, r.lambda_, r.A_t, r.tau_post)
    print(run.A_T, run.A_bar, run.bwt)

Definitions (as ``flycl-lab run`` and the reference code): the classes are
shuffled once by the seed (``order="flycl"``: Python's
``random.sample(range(C), C)`` after ``random.seed(seed)``, the official
Fly-CL code's; ``"pilot"``: ``numpy.random.seed(seed);
numpy.random.permutation(C)``, PILOT/PyCIL's; ``"none"``; or a list), then
split into equal tasks. a(t, i) is the accuracy on task i's test samples
after learning task t (argmax over every class learned so far); A_t the mean
of a(t, i) over i <= t, A_T the last, A_bar the mean of A_t over t, BWT
the mean of a(T, i) - a(i, i) over i < T. τ_post is the wall time of a
task's learn (features given: nothing is extracted), measured here around
the call; the Go engine's own stage times are in ``TaskResult.stages``.
"""

import random
import time
from dataclasses import dataclass, field

import numpy as np

from .model import Model, as_features


def class_order(n_classes, seed=1993, order="flycl"):
    """The class order (indices into the sorted labels) of a seed."""
    if order == "flycl":
        return random.Random(seed).sample(range(n_classes), n_classes)
    if order == "pilot":
        return np.random.RandomState(seed).permutation(n_classes).tolist()
    if order == "none":
        return list(range(n_classes))
    order = [int(i) for i in order]
    if sorted(order) != list(range(n_classes)):
        raise ValueError(f"order: not a permutation of the {n_classes} classes: {order}")
    return order


@dataclass
class TaskResult:
    """One task of a run: its classes (labels), the λ GCV chose, its GCV
    scores over the grid, τ_post (s), the engine's stage times (s), and the
    accuracies after it: a(t, i) for i <= t, A_t, and the pooled accuracy
    over every test sample of the classes so far."""
    task: int
    classes: list
    samples: int
    lambda_: float
    grid: list
    gcv: list
    tau_post: float
    stages: dict
    accuracies: list = field(default_factory=list)
    A_t: float = float("nan")
    pooled: float = float("nan")


class Experiment:
    """One run of the class-incremental protocol (see the module's doc).
    The keywords besides tasks/order/seed are flycl.Model's configuration
    (m, p, k, lambdas, ...)."""

    def __init__(self, X_train, y_train, X_test, y_test, tasks=10, order="flycl", seed=1993, **config):
        self.X_train = as_features(X_train, name="X_train")
        self.X_test = as_features(X_test, self.X_train.shape[1], name="X_test")
        self.y_train = np.asarray(y_train).ravel()
        self.y_test = np.asarray(y_test).ravel()
        if len(self.y_train) != len(self.X_train) or len(self.y_test) != len(self.X_test):
            raise ValueError("as many labels as samples are needed, in train and in test")
        self.labels = np.unique(self.y_train)
        C = len(self.labels)
        if not 1 <= tasks <= C or C % tasks:
            raise ValueError(f"{C} classes do not split into {tasks} equal tasks")
        self.order = class_order(C, seed, order)
        per = C // tasks
        self.tasks = [[self.labels[i].item() for i in self.order[t * per:(t + 1) * per]] for t in range(tasks)]
        self.model = Model(self.X_train.shape[1], **config)
        self.results = []
        self._test_task = np.full(len(self.y_test), -1)
        for t, cls in enumerate(self.tasks):
            self._test_task[np.isin(self.y_test, cls)] = t

    def learn_task(self, t=None):
        """Learns task t (default: the next one) as flycl learn does: one
        task, λ by GCV on it; returns its TaskResult, not yet evaluated."""
        t = len(self.results) if t is None else t
        if t != len(self.results):
            raise ValueError(f"task {t}: the next task is {len(self.results)}")
        cls = self.tasks[t]
        sel = np.isin(self.y_train, cls)
        x, y = np.ascontiguousarray(self.X_train[sel]), self.y_train[sel]
        t0 = time.perf_counter()
        lam = self.model.learn(x, y)
        tau = time.perf_counter() - t0
        rec = self.model.history[-1]
        r = TaskResult(task=t, classes=cls, samples=int(sel.sum()), lambda_=lam,
                       grid=rec.get("grid") or [], gcv=rec.get("gcv") or [], tau_post=tau,
                       stages=rec.get("seconds") or {})
        self.results.append(r)
        return r

    def evaluate(self, r=None):
        """Fills in the accuracies of the last task learned (or of r):
        a(t, i) for every task i so far, A_t and the pooled accuracy."""
        r = self.results[-1] if r is None else r
        seen = self._test_task >= 0
        seen &= self._test_task <= r.task
        x = np.ascontiguousarray(self.X_test[seen])
        names = np.asarray(self.model.classes, dtype=object)
        pred = names[self.model.predict(x)]
        truth = np.asarray([str(v) for v in self.y_test[seen].tolist()], dtype=object)
        ok = pred == truth
        tt = self._test_task[seen]
        r.accuracies = [float(ok[tt == i].mean()) if np.any(tt == i) else float("nan") for i in range(r.task + 1)]
        r.A_t = float(np.mean(r.accuracies))
        r.pooled = float(ok.mean())
        return r

    def __iter__(self):
        """Learns and evaluates every remaining task, yielding each result."""
        while len(self.results) < len(self.tasks):
            yield self.evaluate(self.learn_task())

    def run(self):
        """All the tasks; returns self."""
        for _ in self:
            pass
        return self

    @property
    def matrix(self):
        """a(t, i) as a T x T array (NaN above the diagonal)."""
        T = len(self.results)
        a = np.full((T, T), np.nan)
        for r in self.results:
            a[r.task, :r.task + 1] = r.accuracies
        return a

    @property
    def A_T(self):
        return self.results[-1].A_t

    @property
    def A_bar(self):
        return float(np.mean([r.A_t for r in self.results]))

    @property
    def bwt(self):
        a = self.matrix
        T = len(a)
        if T < 2:
            return 0.0
        return float(np.mean([a[T - 1, i] - a[i, i] for i in range(T - 1)]))

    @property
    def tau_post(self):
        """Mean τ_post per task (s)."""
        return float(np.mean([r.tau_post for r in self.results]))
