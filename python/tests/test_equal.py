"""The Python package equals the flycl command: the same features and
configuration, a multi-task run with a forget and an unlearn in the middle,
give the same λ and GCV scores, the same scores bit for bit, the same
answers ("unknown", probabilities) and a byte-identical model file but for
its time stamps, identity and measured stage times."""

import json

import numpy as np
import pytest

import flycl
from conftest import blobs, read_model_file, run_cli, stable_header

D, C, PER = 48, 8, 30
CFG = dict(m=600, p=24, k=180, lambdas=[1e-2, 1e-1, 1, 10, 100, 1e3, 1e4, 1e5])
FLAGS = ["--m", CFG["m"], "--p", CFG["p"], "--k", CFG["k"],
         "--lambdas", ",".join(repr(v) for v in CFG["lambdas"]), "--quiet"]
NAMES = [f"class-{i}" for i in range(C)]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("equal")
    # noisy, overlapping classes, so that GCV chooses inside the grid and
    # some test samples are close calls
    x, y, means = blobs(C, D, PER, seed=7, spread=1.2)
    r = np.random.default_rng(8)
    yt = np.repeat(np.arange(C), 12)
    xt = (means[yt] + r.normal(scale=1.2, size=(len(yt), D))).astype(np.float32)
    # a few samples of no class: far from every mean (for "unknown")
    xt = np.concatenate([xt, (4 * r.normal(size=(6, D))).astype(np.float32)])
    tasks = [(0, 1), (2, 3), (4, 5), (6, 7)]
    files = []
    for t, cls in enumerate(tasks):
        sel = np.isin(y, cls)
        f = d / f"task{t}.npz"
        np.savez(f, features=x[sel], labels=y[sel], class_names=np.array(NAMES))
        files.append(f)
    test = d / "test.npz"
    np.savez(test, features=xt, labels=np.zeros(len(xt), dtype=np.int64))  # (predict wants labels)
    return dict(dir=d, x=x, y=y, xt=xt, tasks=tasks, files=files, test=test)


def cli_run(data, out):
    """flycl learn task 0, learn task 1, forget class-1 (with its data),
    learn task 2, undo it, learn task 3, into the folder out."""
    model = out / "cli.flycl"
    f = data["files"]
    run_cli("learn", "--model", model, "--features", f[0], *FLAGS)
    run_cli("learn", "--model", model, "--features", f[1], *FLAGS)
    run_cli("forget", "--model", model, "--class", NAMES[1], "--features", f[0], "--quiet")
    run_cli("learn", "--model", model, "--features", f[2], *FLAGS)
    run_cli("undo", "--model", model)
    run_cli("learn", "--model", model, "--features", f[3], *FLAGS)
    return model


def python_run(data):
    """The same steps through flycl.Model."""
    x, y = data["x"], data["y"]
    m = flycl.Model(D, **CFG)
    lambdas = []
    for t in (0, 1, 2, 3):
        cls = data["tasks"][t]
        sel = np.isin(y, cls)
        # names in the order of their labels, as flycl learn registers them
        lambdas.append(m.learn_indexed(x[sel], y[sel] - cls[0], [NAMES[c] for c in cls]))
        if t == 1:
            assert m.forget(NAMES[1], x[y == 1]) is True
        if t == 2:
            m.unlearn()
    return m, lambdas


def cli_predictions(model, test, n_classes):
    out = run_cli("predict", "--model", model, "--features", test, "--format", "json",
                  "--top", n_classes, "--quiet")
    return json.loads(out)["predictions"]


def test_python_equals_the_cli(data, tmp_path):
    cli_model = cli_run(data, tmp_path)
    m, lambdas = python_run(data)
    cli_header, cli_payload = read_model_file(cli_model)

    # the same classes, λ and GCV scores of every step
    assert m.classes == [NAMES[i] for i in (0, 2, 3, 6, 7)]
    assert m.lambda_ == cli_header["lambda"]
    hist = m.history
    assert [h.get("lambda") for h in hist] == [h.get("lambda") for h in cli_header["history"]]
    assert [h.get("gcv") for h in hist] == [h.get("gcv") for h in cli_header["history"]]
    # GCV chose inside the grid, and not the same λ every time (the data is
    # made so), so that the choice itself is compared
    chosen = {lam for lam in lambdas}
    assert len(chosen) > 1 and max(chosen) < max(CFG["lambdas"])

    # scores bit for bit, answers, probabilities and "unknown"
    xt = data["xt"]
    s = m.scores(xt)
    a = m.answer(xt)
    preds = cli_predictions(cli_model, data["test"], m.num_classes)
    assert len(preds) == len(xt)
    names = m.classes
    for i, p in enumerate(preds):
        row = {r["name"]: np.float32(r["score"]) for r in p["top"]}
        assert len(row) == len(names)
        want = np.array([row[n] for n in names], dtype=np.float32)
        assert want.tobytes() == s[i].tobytes(), f"sample {i}: scores differ"
        assert p["top"][0]["name"] == names[a.classes[i]]
        assert bool(p["unknown"]) == bool(a.unknown[i])
        assert p["probability"] == a.probability[i]
        assert p["unknown_margin"] == a.margin[i]
    assert a.unknown.any() and not a.unknown.all()  # both kinds of answer were compared

    # the model file: byte-identical but for time stamps, identity and stage times
    py_model = tmp_path / "py.flycl"
    m.save(py_model)
    py_header, py_payload = read_model_file(py_model)
    assert stable_header(py_header) == stable_header(cli_header)
    assert py_payload == cli_payload


def test_a_python_model_is_served_by_the_cli(data, tmp_path):
    m, _ = python_run(data)
    p = tmp_path / "served.flycl"
    m.save(p)
    preds = cli_predictions(p, data["test"], m.num_classes)
    s = m.scores(data["xt"])
    got = np.array([[np.float32(r["score"]) for r in sorted(q["top"], key=lambda r: m.class_index(r["name"]))]
                    for q in preds], dtype=np.float32)
    assert got.tobytes() == s.tobytes()


def test_a_cli_model_loads_in_python_and_unlearns(data, tmp_path):
    cli_model = cli_run(data, tmp_path)
    m = flycl.Model.load(cli_model)
    py, _ = python_run(data)
    assert np.array_equal(m.scores(data["xt"]), py.scores(data["xt"]))
    # the journal's last learn (task 3) can be taken back, as flycl undo does
    m.unlearn()
    assert m.classes == [NAMES[i] for i in (0, 2, 3)]


def test_flycl_serve_serves_a_python_model(data, tmp_path):
    """flycl serve on 127.0.0.1 answers POST /v1/predict for a model saved
    from Python with the Python scores."""
    import re
    import subprocess
    import time
    import urllib.request

    from conftest import flycl_bin
    m, _ = python_run(data)
    p = tmp_path / "served.flycl"
    m.save(p)
    log = tmp_path / "serve.log"
    with open(log, "w") as lf:
        srv = subprocess.Popen([flycl_bin(), "serve", "--model", str(p), "--addr", "127.0.0.1:0"],
                               stdout=lf, stderr=subprocess.STDOUT)
    try:
        url = None
        for _ in range(300):  # up to 30 s for the server to say where it listens
            found = re.search(r"msg=serving addr=(http://127\.0\.0\.1:\d+)", log.read_text())
            if found:
                url = found.group(1)
                break
            if srv.poll() is not None:
                break
            time.sleep(0.1)
        assert url, f"flycl serve did not start: {log.read_text()}"
        xt = data["xt"][:5]
        body = json.dumps({"features": xt.tolist(), "top": m.num_classes}).encode()
        req = urllib.request.Request(url + "/v1/predict", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            got = json.loads(resp.read())
    finally:
        srv.terminate()
        srv.wait(timeout=30)
    s = m.scores(xt)
    preds = got["predictions"]
    assert len(preds) == len(xt)
    for i, q in enumerate(preds):
        row = {r["class"]: np.float32(r["score"]) for r in q["top"]}
        assert np.array([row[n] for n in m.classes], dtype=np.float32).tobytes() == s[i].tobytes()
