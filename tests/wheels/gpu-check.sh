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
#       the machine's python3 (with torch): muster_torch's potrs on CPU and
#       on 2 GPUs' tensors, checked against the answer.
# Prints one "ok"/"FAILED" line per check and "N passed, M failed"; exits 1
# on any failure.
set -uo pipefail
PY=${PYTHON:-python3}
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
out=$("$tmp/a/bin/muster" solve potrs --n 8192 --ranks 2 --mode threads --json 2>"$tmp/solve.err")
echo "$out" | cut -c1-300
echo "$out" | grep -q '"ok":true' && echo "$out" | grep -q '"mem":"cuda"' && echo "$out" | grep -q '"devices":\[0,1\]'
check "(a) muster solve potrs n 8192 on GPUs 0 and 1, residual ok" $?

echo "== (b) the packages on the PYTHONPATH of the python that has torch"
"$PY" -m pip install -q --no-deps --no-index --target "$tmp/b" "$dist"/muster_runtime-*.whl "$dist"/muster_torch-*.whl
PYTHONPATH="$tmp/b" "$PY" - <<'PYEOF'
import sys, torch, muster_torch as mt
print("muster_torch", mt.__version__, mt.lib_dir())
bad = 0
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
        ok = res < 64 * n * eps
        bad += not ok
        print(("ok" if ok else "FAILED") + f": (b) muster_torch.potrs {dev} {dt}: residual {res:.2e}")
maps = open("/proc/self/maps").read().split("\n")
print(sorted({l.split()[-1] for l in maps if ("libcusolver" in l or "libcudart" in l or "muster_runtime" in l) and ".so" in l}))
sys.exit(1 if bad else 0)
PYEOF
check "(b) muster_torch on CPU and CUDA tensors" $?
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
