#!/usr/bin/python3
# Fixtures for package modelfile, written once with Debian's python3-numpy
# (/usr/bin/python3 gen.py) and committed: projection matrices as another
# implementation would save them.
import numpy as np

rng = np.random.default_rng(0)
m, d, p = 6, 5, 2
W = np.zeros((m, d), dtype=np.float32)
for j in range(m):
    cols = rng.choice(d, size=p, replace=False)
    W[j, cols] = rng.standard_normal(p).astype(np.float32)
np.savez("dense_w.npz", W=W)
np.savetxt("dense_w.txt", W)  # the expected matrix, human-readable
# sparse form with wider dtypes (int64 indices, float64 values)
idx = np.array([np.sort(np.nonzero(W[j])[0]) for j in range(m)], dtype=np.int64)
vals = np.array([W[j, idx[j]] for j in range(m)], dtype=np.float64)
np.savez("sparse_w.npz", indices=idx, values=vals, shape=np.array([m, d]))
# a dense W whose rows have different non-zero counts
bad = W.copy(); bad[0, :] = 1
np.savez("ragged_w.npz", W=bad)
