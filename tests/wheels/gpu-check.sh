#!/usr/bin/env bash
# tests/wheels/gpu-check.sh: the wheels of dist/ (tools/wheels/build.sh) on a
# GPU machine with 2 or more GPUs whose python3 has torch for CUDA 13 and
# NVIDIA's CUDA 13 wheels (site-packages/nvidia/cu13/lib, nvidia/nccl/lib),
# as a user would install them, nothing of a build tree in sight (every
# MUSTER_* variable, PYTHONPATH and LD_LIBRARY_PATH unset):
#   (a) a fresh venv holding muster-runtime and muster_torch, NVIDIA's wheels
#       beside them (what `pip install muster-runtime[cuda13]` makes; here a
#       link to the machine's nvidia/ folder): `muster providers` loads the
#       GPU providers from the wheel and CUDA's libraries from that
#       site-packages, not from the toolkit; `muster solve` on 2 GPUs;
#   (b) the packages in a `pip install --target` folder on the PYTHONPATH of
#       the machine's python3 (with torch and jax): muster_torch's potrs and
#       syevd on CPU and on 2 GPUs' tensors, muster_jax's potrs and syevd on
#       a mesh of 2 GPUs, each checked by its residual;
#   (c) with --hide-toolkit (root; a private mount namespace, so the machine
#       is untouched): (a)'s providers and solve, and (b)'s muster_torch and
#       muster_jax checks, again with an empty tmpfs over /usr/local/cuda, as
#       on a machine with only the driver (JAX gets ptxas and libdevice
#       aside, as its nvcc wheel would give it; the libraries the Python
#       process maps are checked: none from the toolkit).
# Prints one "ok"/"FAILED" line per check and "N passed, M failed"; exits 1
# on any failure.
set -uo pipefail
PY=${PYTHON:-python3}
hide=0
[ "${1:-}" = --hide-toolkit ] && hide=1
dist=$(cd "$(dirname "$0")/../../dist" && pwd)
for v in $(env | sed -n 's/^\(MUSTER_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset PYTHONPATH LD_LIBRARY_PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # check WHAT STATUS
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok: $1"; else fail=$((fail + 1)); echo "FAILED: $1"; fi
}
sys_sp=$("$PY" -c 'import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))') || exit 1
echo "python: $("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'); nvidia wheels in $sys_sp: $(ls "$sys_sp/nvidia" | tr '\n' ' ')"

echo "== (a) a venv with NVIDIA's wheels beside muster-runtime"
"$PY" -m venv "$tmp/a" && "$tmp/a/bin/pip" install -q --no-deps --no-index "$dist"/muster_runtime-*.whl "$dist"/muster_torch-*.whl
sp=$("$tmp/a/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
ln -s "$sys_sp/nvidia" "$sp/nvidia"
cd "$tmp" || exit 1
"$tmp/a/bin/muster" providers > "$tmp/prov.txt" 2>&1
grep -E "^[a-z]|^  lib" "$tmp/prov.txt"
for p in cusolvermg cusolverdn; do
  grep -E "^$p .* available" "$tmp/prov.txt" | grep -qv unavailable
  check "(a) $p available" $?
  grep -A1 -E "^$p " "$tmp/prov.txt" | grep -q "$sp/muster_runtime/"
  check "(a) $p loaded from the wheel" $?
done
for lib in libcudart.so.13 libcublas.so.13 libcusolver.so.12; do
  grep -E "^  $lib " "$tmp/prov.txt" | grep -q "/nvidia/cu13/lib/$lib"
  check "(a) $lib from NVIDIA's wheel (site-packages/nvidia/cu13/lib)" $?
done
solve_check() { # solve_check LABEL: muster solve potrs and syevd on GPUs 0 and 1 from venv a
  for r in potrs syevd; do
    out=$("$tmp/a/bin/muster" solve $r --n 4096 --ranks 2 --mode processes --json 2>"$tmp/solve.err")
    echo "$out" | cut -c1-200
    echo "$out" | grep -q '"ok":true' && echo "$out" | grep -q '"mem":"cuda"' && echo "$out" | grep -q '"devices":\[0,1\]'
    check "$1 muster solve $r n 4096 on GPUs 0 and 1, residual ok" $?
  done
}
solve_check "(a)"

echo "== (b) the packages on the PYTHONPATH of the python that has torch"
"$PY" -m pip install -q --no-deps --no-index --target "$tmp/b" "$dist"/muster_runtime-*.whl "$dist"/muster_torch-*.whl "$dist"/muster_jax-*.whl
cat > "$tmp/b.py" <<'PYEOF'
import sys, torch, muster_torch as mt
print("muster_torch", mt.__version__, mt.lib_dir())
bad = 0
def report(ok, what):
    global bad
    bad += not ok
    print(("ok" if ok else "FAILED") + ": " + what)
for dev in (["cpu", "cpu"], ["cuda:0", "cuda:1"]):
    for dt in (torch.float64, torch.complex64):
        n = 256
        g = torch.randn(n, n, dtype=dt)
        A = g @ g.mH + n * torch.eye(n, dtype=dt)
        b = torch.randn(n, 2, dtype=dt)
        shards = [s.to(d) for s, d in zip(mt.split_columns(A, 2), dev)]
        x = mt.potrs(shards, b.to(dev[0])).cpu()
        res = float(torch.linalg.norm(A @ x - b) / (torch.linalg.norm(A) * torch.linalg.norm(x)))
        eps = torch.finfo(torch.float64 if dt == torch.float64 else torch.float32).eps
        report(res < 64 * n * eps, f"(b) muster_torch.potrs {dev} {dt}: residual {res:.2e}")
        w, v = mt.syevd(shards)
        V = torch.cat([c.cpu() for c in v], dim=1)
        res = float(torch.linalg.norm(A @ V - V * w.cpu().to(dt)) / (torch.linalg.norm(A) * n ** 0.5))
        report(res < 64 * n * eps, f"(b) muster_torch.syevd {dev} {dt}: residual {res:.2e}")
import os
if os.environ.get("GPUCHECK_JAX", "1") == "0":
    print("n/a: muster_jax: this python's JAX itself cannot run a jnp op on a GPU here (see above)")
    maps = open("/proc/self/maps").read().split("\n")
    print(sorted({l.split()[-1] for l in maps if ("libcusolver" in l or "libcudart" in l or "muster_runtime" in l) and ".so" in l}))
    sys.exit(1 if bad else 0)
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
import muster_jax as mj
jax.config.update("jax_enable_x64", True)
gpus = [d for d in jax.devices() if d.platform == "gpu"][:2]
mesh = jax.sharding.Mesh(np.array(gpus), ("x",))
n = 512
g = np.random.default_rng(1).standard_normal((n, n))
A = g @ g.T + n * np.eye(n)
b = np.random.default_rng(2).standard_normal((n, 2))
As = jax.device_put(A, NamedSharding(mesh, P(None, "x")))
x = np.asarray(mj.potrs(As, b, mesh=mesh, in_specs=(P(None, "x"), P(None, None))))
res = np.linalg.norm(A @ x - b) / (np.linalg.norm(A) * np.linalg.norm(x))
report(res < 64 * n * 2.2e-16, f"(b) muster_jax.potrs on {[str(d) for d in gpus]} f64: residual {res:.2e}")
w, v = mj.syevd(As, mesh=mesh, in_specs=P(None, "x"))
w, v = np.asarray(w), np.asarray(v)
res = np.linalg.norm(A @ v - v * w) / (np.linalg.norm(A) * n ** 0.5)
report(res < 64 * n * 2.2e-16, f"(b) muster_jax.syevd on 2 GPUs f64: residual {res:.2e}")
maps = open("/proc/self/maps").read().split("\n")
print(sorted({l.split()[-1] for l in maps if ("libcusolver" in l or "libcudart" in l or "muster_runtime" in l) and ".so" in l}))
sys.exit(1 if bad else 0)
PYEOF
PYTHONPATH="$tmp/b" "$PY" "$tmp/b.py"
check "(b) muster_torch and muster_jax on CPU and CUDA arrays" $?
if [ "$hide" = 1 ]; then
  echo "== (c) (a) with /usr/local/cuda hidden (a tmpfs over it, in a private mount namespace)"
  unshare -m bash -c 'mount -t tmpfs tmpfs /usr/local/cuda && "$0/a/bin/muster" providers 2>&1 |
    grep -E "^(cusolvermg|cusolverdn) |^  lib(cudart|cublas|cusolver)\." ; ls /usr/local/cuda | wc -l' "$tmp" > "$tmp/c.txt" 2>&1
  cat "$tmp/c.txt"
  ! grep -q "/usr/local/cuda" "$tmp/c.txt" && grep -E "^cusolvermg " "$tmp/c.txt" | grep -qv unavailable
  check "(c) toolkit hidden: cusolvermg available, no library from /usr/local/cuda" $?
  unshare -m bash -c 'mount -t tmpfs tmpfs /usr/local/cuda && "$0/a/bin/muster" solve potrs --n 4096 --ranks 2 --mode processes --json' "$tmp" > "$tmp/c2.txt" 2>&1
  cut -c1-200 "$tmp/c2.txt"
  grep -q '"ok":true' "$tmp/c2.txt" && grep -q '"mem":"cuda"' "$tmp/c2.txt"
  check "(c) toolkit hidden: muster solve potrs on 2 GPUs" $?
  # JAX's own GPU compiler needs ptxas and libdevice, which jax[cuda13]
  # installs as NVIDIA's nvcc wheel; the GPU machines' JAX was installed
  # without it and finds them in the toolkit (with the toolkit hidden even
  # a plain jnp transpose fails: 2026-11-27, 4 x H200).  Give JAX those two
  # files only (no library), as that wheel would: muster's libraries must
  # still come from the wheels, checked below in the process's maps.
  jc="$tmp/jaxcuda"
  mkdir -p "$jc/bin" "$jc/nvvm" && cp -r /usr/local/cuda/nvvm/libdevice "$jc/nvvm/" && cp /usr/local/cuda/bin/ptxas "$jc/bin/"
  xf="--xla_gpu_cuda_data_dir=$jc --xla_gpu_autotune_level=0"
  # JAX alone first: when a plain jnp op fails, muster_jax cannot be judged
  # here (said as "n/a", not counted); the torch checks still run.
  unshare -m bash -c 'mount -t tmpfs tmpfs /usr/local/cuda && XLA_FLAGS="$2" "$1" -c "
import jax, jax.numpy as jnp
x = jax.device_put(jnp.ones((512, 256)), [d for d in jax.devices() if d.platform == \"gpu\"][0])
print(\"jax alone on a GPU, toolkit hidden:\", float((x.T @ x).sum()))"' "$tmp" "$PY" "$xf" > "$tmp/c3j.txt" 2>&1
  jst=$?
  grep -v "^[WEI][0-9]\{4\} " "$tmp/c3j.txt" | tail -3 | cut -c1-300
  jok=1; [ "$jst" = 0 ] || jok=0
  unshare -m bash -c 'mount -t tmpfs tmpfs /usr/local/cuda && GPUCHECK_JAX=$3 XLA_FLAGS="$2" PYTHONPATH="$0/b" "$1" "$0/b.py"' \
    "$tmp" "$PY" "$xf" "$jok" > "$tmp/c3.txt" 2>&1
  st=$?
  sed 's/^\(ok\|FAILED\): (b)/\1: (c) toolkit hidden:/' "$tmp/c3.txt" | grep -v "^[WEI][0-9]\{4\} "
  check "(c) toolkit hidden: muster_torch$([ $jok = 1 ] && echo " and muster_jax") potrs and syevd on CPU and 2 GPUs" $st
  grep -q "^\[.*muster_runtime" "$tmp/c3.txt" && ! grep "^\[.*muster_runtime" "$tmp/c3.txt" | grep -q "/usr/local/cuda"
  check "(c) toolkit hidden: the Python process mapped muster's libraries, none from /usr/local/cuda" $?
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
