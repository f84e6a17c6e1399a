#!/usr/bin/python3
# Feature-file fixtures written with Debian's python3-numpy, committed:
# /usr/bin/python3 gen.py
import numpy as np

F = np.arange(12, dtype=np.float32).reshape(4, 3)
np.savez("good.npz", features=F, labels=np.array([0, 1, 1, 5]), paths=np.array(["a", "b", "c", "d"]))
bad = F.copy(); bad[2, 1] = np.nan
np.savez("nan.npz", features=bad, labels=np.array([0, 1, 1, 5]))
np.savez("labels_short.npz", features=F, labels=np.array([0, 1, 1]))
np.savez("features_1d.npz", features=F.ravel(), labels=np.arange(12))
np.savez("no_labels.npz", features=F)
np.savez("neg_label.npz", features=F, labels=np.array([0, -1, 1, 5]))
np.savez("frac_label.npz", features=F, labels=np.array([0, 1.5, 1, 5]))
raw = open("good.npz", "rb").read()
open("truncated.npz", "wb").write(raw[: len(raw) - 100])
