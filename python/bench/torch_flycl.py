"""Fly-CL written in PyTorch the way the official Fly-CL code does it.

This is the comparison point of ``python/bench/torch_vs_flycl.py`` and of a
test: an independent implementation of the same algorithm, with the same
projection W (flycl's, read from ``flycl-lab export-w`` or from a model), so that
predictions can be compared sample by sample and times side by side.

Per task, as the official code:

* codes: ``H = top-k(W x)`` with W a ``torch.sparse_coo_tensor`` (m x d, p
  non-zeros per row) applied by ``torch.sparse.mm``; top-k keeps the k largest
  signed values (``torch.topk`` + ``scatter``);
* statistics in float32: ``G += H^T H``, ``S += H^T Y`` (Y one-hot, no bias);
* lambda by GCV on the task's H alone, from its thin SVD ``H = U diag(s) V^T``:
  ``D = s^2/(s^2+lambda)``, ``Yhat = U diag(D) U^T Y``,
  ``GCV = (||Y - Yhat||_F^2/n) / (1 - sum(D)/n)^2``, the first argmin of the grid;
* ``C = (G + lambda I)^-1 S`` by a fresh Cholesky factorisation
  (``torch.linalg.cholesky`` + ``torch.cholesky_solve``);
* prediction: argmax of ``H C`` over the classes seen so far.

It needs PyTorch (Debian's python3-torch) and runs on the CPU.
"""

import numpy as np
import torch


def sparse_w(indices, values, d):
    """W as a torch sparse COO matrix (m x d) from flycl's export-w layout:
    ``indices`` and ``values`` are m x p (row i's p columns and values)."""
    indices = np.asarray(indices, dtype=np.int64)
    values = np.asarray(values, dtype=np.float32)
    m, p = indices.shape
    rows = np.repeat(np.arange(m, dtype=np.int64), p)
    idx = torch.from_numpy(np.stack([rows, indices.reshape(-1)]))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(values.reshape(-1)), (m, d)).coalesce()


class TorchFlyCL:
    """Fly-CL's class-incremental learner in PyTorch (float32, CPU)."""

    def __init__(self, w_indices, w_values, d, k, lambdas):
        self.W = sparse_w(w_indices, w_values, d)
        self.m = self.W.shape[0]
        self.k = int(k)
        self.lambdas = [float(x) for x in lambdas]
        self.G = torch.zeros(self.m, self.m, dtype=torch.float32)
        self.S = torch.zeros(self.m, 0, dtype=torch.float32)
        self.C = None
        self.classes = []  # labels in column order
        self.lambda_ = None
        self.gcv_scores = None

    def expand(self, x):
        """top-k(W x) for the rows of x (n x d float32 tensor)."""
        h = torch.sparse.mm(self.W, x.t()).t()
        vals, idx = torch.topk(h, self.k, dim=1)
        return torch.zeros_like(h).scatter_(1, idx, vals)

    def gcv(self, h, y):
        """GCV score of every grid value on the task's codes h and one-hot y,
        from the thin SVD of h; returns (first argmin, scores)."""
        n = h.shape[0]
        u, s, _ = torch.linalg.svd(h, full_matrices=False)
        uty = u.t() @ y
        s2 = s * s
        scores = []
        for lam in self.lambdas:
            dd = s2 / (s2 + lam)
            yhat = u @ (dd[:, None] * uty)
            resid = ((y - yhat) ** 2).sum() / n
            scores.append(float(resid / (1 - dd.sum() / n) ** 2))
        best = int(np.argmin(scores))  # first argmin
        return self.lambdas[best], scores

    def learn_task(self, x, labels):
        """Learn one task: features x (n x d) and integer labels (n)."""
        x = torch.as_tensor(np.ascontiguousarray(x, dtype=np.float32))
        labels = np.asarray(labels)
        for c in sorted(set(labels.tolist())):
            if c not in self.classes:
                self.classes.append(c)
                self.S = torch.cat([self.S, torch.zeros(self.m, 1)], dim=1)
        col = {c: i for i, c in enumerate(self.classes)}
        y = torch.zeros(x.shape[0], len(self.classes), dtype=torch.float32)
        y[torch.arange(x.shape[0]), torch.tensor([col[c] for c in labels.tolist()])] = 1
        h = self.expand(x)
        self.G += h.t() @ h
        self.S += h.t() @ y
        task_cols = sorted({col[c] for c in labels.tolist()})
        self.lambda_, self.gcv_scores = self.gcv(h, y[:, task_cols])
        eye = torch.eye(self.m, dtype=torch.float32)
        chol = torch.linalg.cholesky(self.G + self.lambda_ * eye)
        self.C = torch.cholesky_solve(self.S, chol)
        return self.lambda_

    def scores(self, x):
        x = torch.as_tensor(np.ascontiguousarray(x, dtype=np.float32))
        return self.expand(x) @ self.C

    def predict(self, x):
        idx = torch.argmax(self.scores(x), dim=1).numpy()
        return np.asarray(self.classes)[idx]
