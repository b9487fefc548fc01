#!/bin/sh
# The muster_jax suite on a machine with >= 2 GPUs (cusolvermg provider),
# one MPMD run of 2 processes (one GPU each), the store bootstrap's solves on
# cusolvermp (STORE_GPUS processes, default 2), and optionally the benchmark.
#
#   tests/python/jax/run-gpu.sh [BUILD_DIR] [--bench]      (from the repo root)
#
# Order: a smoke solve, the benchmark (with --bench), the suite, the MPMD
# run; each step has its own time limit so one stuck step cannot eat the
# others' time.
# BUILD_DIR (default build) holds lib/libmuster_jax.so, lib/libmuster.so and
# lib/muster/providers/cusolvermg.so.  $PYTHON (default python3) needs jax
# with CUDA and pytest; set PYTEST_WHEELS to a folder of wheels to install
# pytest from when it is missing (the GPU machine has no network).
# Logs and results go to $OUT if set, else the current folder.  SUITE_K=EXPR
# runs only the suite's tests that pytest -k EXPR selects; *_TIMEOUT set
# each step's limit (seconds).
set -u
build=build
bench=0
for a in "$@"; do
  case "$a" in
    --bench) bench=1 ;;
    *) build=$a ;;
  esac
done
repo=$(pwd)
out=${OUT:-$repo}
PY=${PYTHON:-python3}
export MUSTER_BUILD="$repo/$build" MUSTER_LIB_DIR="$repo/$build/lib"
export PYTHONPATH="$repo/adapters/jax${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0 MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-20}
# JAX would take 75 % of each GPU up front; cuSolverMg allocates its own
# workspace and relayout buffers with cudaMalloc, next to JAX's pool
export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}
export MUSTER_JOB=jaxgpu$$
if ! $PY -c "import pytest" 2>/dev/null; then
  if [ -n "${PYTEST_WHEELS:-}" ]; then
    $PY -m pip install -q --no-index --find-links "$PYTEST_WHEELS" --target "$out/pydeps" pytest \
      && export PYTHONPATH="$PYTHONPATH:$out/pydeps"
  fi
fi
rc=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null
$PY -c "import jax; print('jax', jax.__version__, jax.devices())"

echo "# 0. smoke: one potrs on 2 GPUs"
timeout ${SMOKE_TIMEOUT:-120} $PY -c "
import jax, jax.numpy as jnp, muster_jax as mj
from jax.sharding import PartitionSpec as P
jax.config.update('jax_enable_x64', True)
m = jax.make_mesh((2,), ('x',), devices=jax.devices()[:2])
x = mj.potrs(jnp.eye(1024) * 2.0, jnp.ones((1024, 1)), mesh=m, in_specs=(P(None, 'x'), P(None, None)))
print('smoke', float(abs(x - 0.5).max()), mj.last_solve())
" 2>&1 | grep -v "^WARNING" | tail -5 || rc=1

if [ $bench -eq 1 ]; then
  echo "# 1. benchmark"
  timeout ${BENCH_TIMEOUT:-240} $PY tests/python/jax/bench_gpu.py --json "$out/jax-bench.json" 2>&1 \
    | grep -v "^WARNING" | tee "$out/jax-bench.log" || rc=1
fi

echo "# 2. the suite on the GPUs (docs examples and the CPU MPMD test are CPU-only)"
# SUITE_K=EXPR: only the tests pytest's -k EXPR selects
if [ -n "${SUITE_K:-}" ]; then set -- -k "$SUITE_K"; else set --; fi
timeout ${SUITE_TIMEOUT:-300} $PY -m pytest -v -rfE -p no:cacheprovider "$@" tests/python/jax \
    --deselect tests/python/jax/test_docs.py --deselect tests/python/jax/test_mpmd.py \
    > "$out/jax-gpu-tests.log" 2>&1 || rc=1
tail -5 "$out/jax-gpu-tests.log"
grep -cE " PASSED" "$out/jax-gpu-tests.log" | sed 's/^/tests passed so far: /'
grep -E "(FAILED|ERROR)" "$out/jax-gpu-tests.log" | head -20

echo "# 3. MPMD: 2 processes, one GPU each (jax.distributed)"
t_mpmd=$(date +%s)
port=$((20000 + $$ % 20000))
seed=$$
MUSTER_JAX_PLATFORM=cuda MPMD_N=4096 timeout -k 10 ${MPMD_TIMEOUT:-120} $PY tests/python/jax/mpmd_worker.py 0 2 $port $seed \
    > "$out/jax-mpmd0.log" 2>&1 &
p0=$!
MUSTER_JAX_PLATFORM=cuda MPMD_N=4096 timeout -k 10 ${MPMD_TIMEOUT:-120} $PY tests/python/jax/mpmd_worker.py 1 2 $port $seed \
    > "$out/jax-mpmd1.log" 2>&1
r1=$?
wait $p0
r0=$?
grep -h -e "^proc" -e "^\[" "$out/jax-mpmd0.log" "$out/jax-mpmd1.log"
echo "MPMD: both processes exited after $(( $(date +%s) - t_mpmd )) s (limit ${MPMD_TIMEOUT:-120} s)"
if [ $r0 -ne 0 ] || [ $r1 -ne 0 ]; then
  echo "MPMD FAILED (rc $r0, $r1)"; tail -n 20 "$out/jax-mpmd0.log" "$out/jax-mpmd1.log"; rc=1
else
  echo "MPMD ok"
fi

echo "# 4. across processes on cusolvermp: the store bootstrap on jax's store (docs/multinode.md)"
# needs cuSOLVERMp where the provider finds it (MUSTER_MP_LIBDIR, or the NVIDIA wheels)
MUSTER_TEST_GPUS=${STORE_GPUS:-2} timeout ${STORE_TIMEOUT:-300} $PY -m pytest -q -rfE -p no:cacheprovider \
    tests/python/jax/test_store_distributed.py -k gpu > "$out/jax-store-gpu.log" 2>&1 || rc=1
tail -20 "$out/jax-store-gpu.log"
echo "segments left: $(ls /dev/shm | grep -c "$MUSTER_JOB" || true)"
exit $rc
