#!/usr/bin/python3
# Generates the .npz/.npy fixtures of package npz with NumPy (run once;
# the outputs are committed). /usr/bin/python3 gen.py (Debian python3-numpy)
import io, zipfile
import numpy as np

f32 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5
np.savez("mixed.npz",
         f32=f32,
         f64=np.array([1.5, -2.25, 1e300], dtype=np.float64),
         f16=np.array([0.5, -1.0, 2.0], dtype=np.float16),
         i64=np.array([-3, 0, 7, 2**40], dtype=np.int64),
         i32=np.array([[1, 2], [3, 4]], dtype=np.int32),
         u8=np.array([0, 255], dtype=np.uint8),
         b=np.array([True, False, True]),
         whole=np.array([1.0, 2.0, -3.0], dtype=np.float32),
         frac=np.array([1.0, 2.5], dtype=np.float64),
         paths=np.array(["train/a/1.jpg", "über/ß.png", ""]),
         fortran=np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
# exact bytes NumPy writes for these arrays, to compare with our writer
np.save("f32_2x3.npy", f32)
np.save("i64_4.npy", np.array([-3, 0, 7, 2**40], dtype=np.int64))
np.save("i32_2x2.npy", np.array([[1, 2], [3, 4]], dtype=np.int32))
np.save("str_3.npy", np.array(["train/a/1.jpg", "über/ß.png", ""]))
raw = open("mixed.npz", "rb").read()
open("truncated.npz", "wb").write(raw[: len(raw) // 2])
# a valid zip whose f32 member is cut short
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    b = io.BytesIO(); np.save(b, np.zeros((100, 10), np.float32))
    z.writestr("x.npy", b.getvalue()[:500])
open("shortmember.npz", "wb").write(buf.getvalue())
