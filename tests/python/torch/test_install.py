"""`pip install adapters/torch` makes a package that works outside the tree:
_runtime.py (a link to adapters/common/runtime.py in the tree) is carried
as a file, and a bundled copy of the build's libraries
(tools/bundle-adapter-libs.sh, what adapters/torch/bundle-libs.sh runs) is
found without MUSTER_LIB_DIR."""
import os
import pathlib
import shutil
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
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=target, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_pip_install_with_bundled_libraries(tmp_path):
    src, target = tmp_path / "src", tmp_path / "site"
    shutil.copytree(REPO / "adapters" / "torch", src, symlinks=False)
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    subprocess.run(["sh", str(REPO / "tools" / "bundle-adapter-libs.sh"),
                    str(src / "muster_torch" / "lib"), "libmuster.so", str(build)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(src)], check=True)
    runtime = target / "muster_torch" / "_runtime.py"
    assert runtime.is_file() and not runtime.is_symlink()
    assert runtime.read_text() == (REPO / "adapters" / "common" / "runtime.py").read_text()
    lib, ok = _run(SOLVE, target, {})
    assert lib == str(target / "muster_torch" / "lib") and ok == "True"


def test_pip_install_with_lib_dir(tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target),
                    str(REPO / "adapters" / "torch")], check=True)
    lib_dir = str(pathlib.Path(os.environ["MUSTER_BUILD"]) / "lib")
    lib, ok = _run(SOLVE, target, {"MUSTER_LIB_DIR": lib_dir})
    assert lib == lib_dir and ok == "True"
