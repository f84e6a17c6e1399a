#!/usr/bin/python3
# More .npz fixtures of package npz, written once with Debian's
# python3-numpy (1.24) and committed: /usr/bin/python3 gen_more.py
# Big-endian and byte-string arrays, which the reader decodes itself.
import numpy as np

np.savez("more.npz",
         f4be=np.array([1.5, -2.0, 3.25], dtype=">f4"),
         f8be=np.array([[1e-3, 2.0], [-7.5, 1e10]], dtype=">f8"),
         i2be=np.array([-300, 2, 32767], dtype=">i2"),
         u4=np.array([0, 4000000000], dtype="<u4"),
         f2be=np.array([0.5, -65504.0, 6e-8], dtype=">f2"),
         bytes=np.array([b"ab", b"", b"xyz"]),
         ube=np.array(["héllo", "w"], dtype=">U5"),
         fortran_i=np.asfortranarray(np.arange(12, dtype=np.int16).reshape(3, 4)))
