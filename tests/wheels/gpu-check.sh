#!/usr/bin/env bash
# tests/wheels/gpu-check.sh: the wheels of dist/ (tools/wheels/build.sh) on a
# GPU machine whose Python has torch for CUDA 13 and its NVIDIA wheels
# (nvidia/cu13/lib): where the GPU providers find CUDA, muster_torch on
# CPU and GPU tensors, muster solve on 2 GPUs.  Two layouts: (a) NVIDIA's
# wheels in the same site-packages as muster_runtime (what
# `pip install muster-runtime[cuda13]` makes; here a link to the system's
# nvidia/ folder), (b) a venv with --system-site-packages (the command puts
# the system's nvidia lib folders on LD_LIBRARY_PATH).
set -uo pipefail
PY=${PYTHON:-python3}
dist=$(cd "$(dirname "$0")/../../dist" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sys_sp=$("$PY" -c 'import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))')
echo "python: $("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'); nvidia wheels in $sys_sp"
ls "$sys_sp/nvidia" | tr '\n' ' '; echo
"$PY" -m venv "$tmp/a" && "$tmp/a/bin/pip" install -q --no-deps --no-index "$dist"/muster_runtime-*.whl "$dist"/muster_torch-*.whl
sp=$("$tmp/a/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
ln -s "$sys_sp/nvidia" "$sp/nvidia"
echo "== (a) same site-packages"; env -u LD_LIBRARY_PATH "$tmp/a/bin/muster" providers | grep -E "^[a-z]|lib"
env -u LD_LIBRARY_PATH "$tmp/a/bin/muster" solve potrs --n 8192 --ranks 2 --mode threads 2>&1 | tail -3
"$PY" -m venv --system-site-packages "$tmp/b" && "$tmp/b/bin/pip" install -q --no-deps --no-index "$dist"/muster_runtime-*.whl "$dist"/muster_torch-*.whl
echo "== (b) --system-site-packages"; env -u LD_LIBRARY_PATH "$tmp/b/bin/muster" providers | grep -E "^  lib"
cd "$tmp" && env -u LD_LIBRARY_PATH "$tmp/b/bin/python" - <<'PYEOF'
import torch, muster_torch as mt
print("muster_torch", mt.__version__, mt.lib_dir())
for dev in (["cpu", "cpu"], ["cuda:0", "cuda:1"]):
    A = torch.eye(64, dtype=torch.float64) * 2
    shards = [s.to(d) for s, d in zip(mt.split_columns(A, 2), dev)]
    x = mt.potrs(shards, torch.ones(64, dtype=torch.float64, device=dev[0]))
    print(dev, bool(torch.allclose(x.cpu(), torch.full((64,), 0.5, dtype=torch.float64))))
maps = open("/proc/self/maps").read().split("\n")
print(sorted({l.split()[-1] for l in maps if "libcusolver" in l or "libcudart" in l or "muster_runtime" in l and ".so" in l}))
PYEOF
