"""The install docs/PYTHON.md gives works offline: pip install
--no-build-isolation of the package folder (with the library make python
builds) into a venv made with --system-site-packages, then the installed
package loads its own copy of the library, from outside the repository."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_pip_install_into_a_venv(tmp_path):
    pytest.importorskip("venv")
    pytest.importorskip("setuptools")
    import flycl
    src = tmp_path / "src"
    src.mkdir()
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / "python" / f, src / f)
    shutil.copytree(ROOT / "python" / "flycl", src / "flycl",
                    ignore=shutil.ignore_patterns("__pycache__", "libflycl.*"))
    shutil.copy(flycl.library_path(), src / "flycl" / "libflycl.so")
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"python -m venv failed (Debian: python3-venv): {r.stderr.strip()[-200:]}")
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("FLYCL_LIB", "PYTHONPATH")}
    subprocess.run([str(py), "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", "-q", str(src)],
                   check=True, capture_output=True, env=env)
    code = ("import flycl, numpy as np; "
            "assert flycl.library_path().startswith(flycl.__path__[0]); "
            "m = flycl.Model(8, m=50, p=4, k=10); "
            "m.learn(np.arange(160, dtype=np.float32).reshape(20, 8) % 7, [0] * 10 + [1] * 10); "
            "print(m.classes)")
    out = subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True, env=env,
                         cwd=tmp_path).stdout
    assert out.strip() == "['0', '1']"
