"""Frigate's custom-classification head, trained as Frigate 0.17 trains it,
in PyTorch on cached backbone features.

Frigate (frigate/util/classification.py, ClassificationTrainingProcess)
builds, on a frozen MobileNetV2:

    GlobalAveragePooling2D -> Dense(128, relu) -> Dropout(0.3)
    -> Dense(classes, softmax)

compiled with Adam(learning_rate=0.001) and categorical cross-entropy, and
fits it for 50 epochs in batches of 16 from
ImageDataGenerator(rescale=1/255, validation_split=0.2)
.flow_from_directory(subset="training"). This module reproduces the head
and the training on pooled features (the backbone is frozen, so its pooled
output is a fixed function of the photo):

- the split: Keras's DirectoryIterator keeps, in each class folder (files
  sorted by name), the files [int(0.2 n), n) for "training"; the
  validation subset is never used by Frigate's fit. The caller passes each
  class's photos in their folder order.
- batches: a fresh random permutation of the training photos every epoch
  (flow_from_directory's shuffle=True), ceil(n / 16) batches, the last one
  partial.
- initialisation: Keras's defaults, glorot_uniform kernels (uniform in
  +-sqrt(6 / (fan_in + fan_out))) and zero biases.
- loss: Keras's categorical_crossentropy of a softmax output, which Keras
  computes from the softmax's logits (softmax_cross_entropy_with_logits),
  averaged over the batch.
- optimiser: Keras 3's Adam (beta_1 0.9, beta_2 0.999, epsilon 1e-7,
  epsilon added to sqrt(v) and the bias corrections folded into the step
  size), which is not torch.optim.Adam's update (epsilon there is added to
  sqrt(v_hat)); it is written out below.
- dropout: inverted, as Keras's (kept units scaled by 1 / 0.7).
- arithmetic: float32, denormals flushed to zero as TensorFlow's CPU
  kernels run (main sets it).

Usage: python3 frigate_head.py JOBDIR. JOBDIR/features.npz holds x, the
N x d float32 features of all photos; every JOBDIR/job-*.npz (rows: int64
rows of x to train on, y: int64 class of each, classes: int64 [C], seed:
int64 [1], test: int64 rows of x to answer) gets JOBDIR/out-*.npz with logits
(t x C float32, the trained head's pre-softmax outputs on test),
seconds (float32 [1], wall time of the initialisation and the 50 epochs)
and rss_kib (int64 [1], the process's peak resident memory so far).
"""

import glob
import math
import os
import resource
import sys
import time

# one thread, set before torch loads its BLAS: the batches are 16 x 1280,
# too small for threads to pay, and a BLAS spinning two threads on a shared
# machine takes many times longer (the benchmark gives flycl's BLAS one
# thread too)
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

BATCH_SIZE = 16  # frigate/util/classification.py
EPOCHS = 50
LEARNING_RATE = 0.001
HIDDEN = 128
DROPOUT = 0.3
VALIDATION_SPLIT = 0.2
# Keras 3's Adam defaults
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-7


def training_rows(y):
    """The rows Keras's flow_from_directory(subset="training",
    validation_split=0.2) trains on: in each class, in the order given (the
    folder's sorted file names), all but the first int(0.2 n)."""
    y = np.asarray(y)
    keep = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        keep.extend(rows[int(VALIDATION_SPLIT * len(rows)):].tolist())
    return np.array(sorted(keep), dtype=np.int64)


def glorot_uniform(rng, fan_in, fan_out):
    """Keras's glorot_uniform kernel of shape (fan_in, fan_out)."""
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return torch.from_numpy(rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(np.float32))


class Head:
    """Dense(128, relu) -> Dropout(0.3) -> Dense(classes) on d-dimensional
    pooled features, with Keras's default initialisation."""

    def __init__(self, d, classes, rng):
        self.params = [
            glorot_uniform(rng, d, HIDDEN).requires_grad_(),
            torch.zeros(HIDDEN, requires_grad=True),
            glorot_uniform(rng, HIDDEN, classes).requires_grad_(),
            torch.zeros(classes, requires_grad=True),
        ]

    def logits(self, x, dropout_gen=None):
        w1, b1, w2, b2 = self.params
        h = torch.relu(x @ w1 + b1)
        if dropout_gen is not None:  # training: inverted dropout
            mask = torch.rand(h.shape, generator=dropout_gen) >= DROPOUT
            h = h * mask / (1.0 - DROPOUT)
        return h @ w2 + b2


class KerasAdam:
    """Keras 3's Adam update (keras/src/optimizers/adam.py), in its order of
    operations: m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2);
    p -= (m alpha) / (sqrt(v) + eps), alpha = lr sqrt(1 - b2^t) / (1 - b1^t).
    Every intermediate goes to a buffer made once: a new 1280 x 128 tensor
    per operation would cost a fresh mapping of memory (and its page
    faults) each time, several times the arithmetic."""

    def __init__(self, params, lr=LEARNING_RATE):
        self.params, self.lr, self.t = params, lr, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.a = [torch.zeros_like(p) for p in params]
        self.b = [torch.zeros_like(p) for p in params]

    @torch.no_grad()
    def step(self):
        self.t += 1
        alpha = self.lr * math.sqrt(1 - BETA_2**self.t) / (1 - BETA_1**self.t)
        for p, m, v, a, b in zip(self.params, self.m, self.v, self.a, self.b):
            g = p.grad
            torch.sub(g, m, out=a)
            m.add_(a.mul_(1 - BETA_1))
            torch.mul(g, g, out=a)
            v.add_(a.sub_(v).mul_(1 - BETA_2))
            torch.mul(m, alpha, out=a)
            torch.sqrt(v, out=b)
            p.sub_(a.div_(b.add_(EPSILON)))
            g.zero_()


def train(x, y, classes, seed):
    """Trains the head on features x (n x d) of classes y as Frigate does;
    returns it."""
    rows = training_rows(y)
    x = torch.from_numpy(np.ascontiguousarray(x[rows], dtype=np.float32))
    y = torch.from_numpy(np.asarray(y, dtype=np.int64)[rows])
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(int(seed))
    head = Head(x.shape[1], classes, rng)
    opt = KerasAdam(head.params)
    n = x.shape[0]
    for _ in range(EPOCHS):
        perm = torch.from_numpy(rng.permutation(n))
        for lo in range(0, n, BATCH_SIZE):
            b = perm[lo:lo + BATCH_SIZE]
            loss = torch.nn.functional.cross_entropy(head.logits(x[b], gen), y[b])
            loss.backward()
            opt.step()
    return head


def run_job(features, path, out):
    with np.load(path) as z:
        rows, y, test = z["rows"], z["y"], z["test"]
        classes, seed = int(z["classes"][0]), int(z["seed"][0])
    t0 = time.perf_counter()
    head = train(features[rows], y, classes, seed)
    seconds = time.perf_counter() - t0
    with torch.no_grad():
        logits = head.logits(torch.from_numpy(np.ascontiguousarray(features[test], dtype=np.float32))).numpy()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    np.savez(out, logits=logits.astype(np.float32), seconds=np.array([seconds], np.float32),
             rss_kib=np.array([rss], np.int64))


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: frigate_head.py JOBDIR")
    torch.set_num_threads(1)
    # TensorFlow runs its CPU kernels with denormals flushed to zero; so
    # does this (Adam's moments of dead ReLU units decay into denormals,
    # whose arithmetic is some 50 times slower)
    torch.set_flush_denormal(True)
    with np.load(os.path.join(argv[1], "features.npz")) as z:
        features = z["x"]
    jobs = sorted(glob.glob(os.path.join(argv[1], "job-*.npz")))
    if not jobs:
        sys.exit(f"frigate_head.py: no job-*.npz in {argv[1]}")
    for j in jobs:
        base = os.path.basename(j)
        run_job(features, j, os.path.join(argv[1], "out-" + base[len("job-"):]))


if __name__ == "__main__":
    main(sys.argv)
