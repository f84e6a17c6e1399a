#!/usr/bin/python3
# Class orders for seeds beyond the shared reference, written once with
# Debian's CPython 3.11 and NumPy 1.24 and committed: /usr/bin/python3 gen.py
import json, random
import numpy as np

out = []
for c in (10, 100, 1000):
    for s in (0, 1, 42, 2**32 + 5, -7):
        random.seed(s)
        out.append({"Order": "flycl", "C": c, "Seed": s, "Perm": random.sample(range(c), c)})
    for s in (0, 1, 42, 2**32 - 1):
        np.random.seed(s)
        out.append({"Order": "pilot", "C": c, "Seed": s, "Perm": [int(v) for v in np.random.permutation(c)]})
json.dump(out, open("orders.json", "w"))
