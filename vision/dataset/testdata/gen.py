#!/usr/bin/python3
# Miniature CIFAR releases in the exact official formats, written once with
# Debian's python3-numpy and committed: /usr/bin/python3 gen.py
#
# The official python releases are Python 2 cPickle files: dict keys and
# file names are py2 str (pickle BINSTRING), the data a numpy uint8 array of
# N x 3072 (R plane, G plane, B plane), labels a list of ints. A custom
# pickler writes bytes as BINSTRING, as Python 2 did.
import io, os, pickle, struct, tarfile
import numpy as np

class Py2Pickler(pickle._Pickler):
    dispatch = pickle._Pickler.dispatch.copy()
    def save_bytes(self, obj):
        n = len(obj)
        if n < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([n]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", n) + obj)
        self.memoize(obj)
    dispatch[bytes] = save_bytes

def py2dump(obj, path):
    with open(path, "wb") as f:
        Py2Pickler(f, protocol=2).dump(obj)

rng = np.random.default_rng(3)

def batch(n, nclass, key):
    data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
    labels = [int(v) for v in rng.integers(0, nclass, n)]
    return {b"batch_label": b"testing batch", key: labels, b"data": data,
            b"filenames": [b"img_%d.png" % i for i in range(n)]}

def tar(src, dst):
    with tarfile.open(dst, "w:gz") as t:
        t.add(src)

# CIFAR-10 python
os.makedirs("cifar-10-batches-py", exist_ok=True)
names10 = [b"airplane", b"automobile", b"bird", b"cat", b"deer", b"dog", b"frog", b"horse", b"ship", b"truck"]
py2dump({b"label_names": names10, b"num_cases_per_batch": 3, b"num_vis": 3072}, "cifar-10-batches-py/batches.meta")
b10 = {}
for i in range(1, 6):
    b10[i] = batch(3, 10, b"labels"); py2dump(b10[i], f"cifar-10-batches-py/data_batch_{i}")
t10 = batch(4, 10, b"labels"); py2dump(t10, "cifar-10-batches-py/test_batch")
tar("cifar-10-batches-py", "cifar-10-python.tar.gz")
# CIFAR-100 python
os.makedirs("cifar-100-python", exist_ok=True)
fine = [b"class_%02d" % i for i in range(100)]
py2dump({b"fine_label_names": fine, b"coarse_label_names": [b"super_%d" % i for i in range(20)]}, "cifar-100-python/meta")
tr100 = batch(5, 100, b"fine_labels"); tr100[b"coarse_labels"] = [l // 5 for l in tr100[b"fine_labels"]]
py2dump(tr100, "cifar-100-python/train")
te100 = batch(2, 100, b"fine_labels"); te100[b"coarse_labels"] = [l // 5 for l in te100[b"fine_labels"]]
py2dump(te100, "cifar-100-python/test")
tar("cifar-100-python", "cifar-100-python.tar.gz")
# binary releases with the same content
os.makedirs("cifar-10-batches-bin", exist_ok=True)
open("cifar-10-batches-bin/batches.meta.txt", "w").write("\n".join(n.decode() for n in names10) + "\n\n")
def bin10(b, path):
    with open(path, "wb") as f:
        for l, row in zip(b[b"labels"], b[b"data"]):
            f.write(bytes([l]) + row.tobytes())
for i in range(1, 6):
    bin10(b10[i], f"cifar-10-batches-bin/data_batch_{i}.bin")
bin10(t10, "cifar-10-batches-bin/test_batch.bin")
os.makedirs("cifar-100-binary", exist_ok=True)
open("cifar-100-binary/fine_label_names.txt", "w").write("\n".join(n.decode() for n in fine) + "\n")
def bin100(b, path):
    with open(path, "wb") as f:
        for c, l, row in zip(b[b"coarse_labels"], b[b"fine_labels"], b[b"data"]):
            f.write(bytes([c, l]) + row.tobytes())
bin100(tr100, "cifar-100-binary/train.bin"); bin100(te100, "cifar-100-binary/test.bin")
# expected content, read independently of the pickles: labels and the first pixel rows
np.savez("expected.npz",
         c10_train_labels=np.array(sum([b10[i][b"labels"] for i in range(1, 6)], [])),
         c10_train_data=np.concatenate([b10[i][b"data"] for i in range(1, 6)]),
         c10_test_labels=np.array(t10[b"labels"]),
         c100_train_labels=np.array(tr100[b"fine_labels"]), c100_train_data=tr100[b"data"],
         c100_test_labels=np.array(te100[b"fine_labels"]))
