"""`pip install adapters/torch` makes a package that works outside the tree:
_runtime.py (a link to adapters/common/runtime.py in the tree) is carried
as a file, the libraries are found through MUSTER_LIB_DIR, and without any
(no muster-runtime wheel, no MUSTER_LIB_DIR) the import fails saying what
is missing.  The wheels themselves: tests/wheels/run.sh."""
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]
SOLVE = ("import torch, muster_torch as mt; A = torch.eye(5, dtype=torch.float64) * 2; "
         "x = mt.potrs(mt.split_columns(A, 2), torch.ones(5, dtype=torch.float64)); "
         "print(mt.lib_dir(), bool(torch.allclose(x, torch.full((5,), 0.5, dtype=x.dtype))))")


def _run(code, target, env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MUSTER_LIB_DIR", "MUSTER_BUILD", "PYTHONPATH")}
    env.update(env_extra, PYTHONPATH=str(target))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=target, timeout=300)


def _install(target):
    # --no-deps: the muster-runtime wheel it requires is not on an index
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target),
                    str(REPO / "adapters" / "torch")], check=True)
    runtime = target / "muster_torch" / "_runtime.py"
    assert runtime.is_file() and not runtime.is_symlink()
    assert runtime.read_text() == (REPO / "adapters" / "common" / "runtime.py").read_text()


def test_pip_install_with_lib_dir(tmp_path):
    target = tmp_path / "site"
    _install(target)
    lib_dir = str(pathlib.Path(os.environ["MUSTER_BUILD"]) / "lib")
    out = _run(SOLVE, target, {"MUSTER_LIB_DIR": lib_dir})
    assert out.returncode == 0, out.stderr[-2000:]
    lib, ok = out.stdout.split()
    assert lib == lib_dir and ok == "True"


def test_installed_without_libraries_fails_at_import(tmp_path):
    target = tmp_path / "site"
    _install(target)
    out = _run("import muster_torch", target, {})
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: muster_torch cannot find the muster libraries: "
                           "libmuster.so not in any folder"), last
    assert "pip install muster-runtime==" in last and "MUSTER_LIB_DIR" in last, last
