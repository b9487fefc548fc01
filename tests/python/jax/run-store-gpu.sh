#!/bin/sh
# muster_jax.distributed on cusolvermp alone: one process per GPU meeting
# over jax.distributed's store, solves on column blocks and on the blocks
# of a 2-D mesh (P("pr", "pc"): 2 x 2 on 4 GPUs, else GPUs x 1) with
# residuals (test_store_distributed.py -k gpu; storecase.solve_case and
# solve_grid_case), eagerly and then with every solve inside jax.jit (the
# muster_jax_store FFI custom call on device buffers; "proc I: jit solves
# ok").  Step 4 of run-gpu.sh, on its own:
#
#   tests/python/jax/run-store-gpu.sh [BUILD_DIR] [GPUS]     (from the repo root)
#
# BUILD_DIR (default build) with lib/ and deps/ (the cuSOLVERMp wheel,
# unpacked into a temporary folder named by MUSTER_MP_LIBDIR unless that is
# set: tests/gpu/gpu-env.sh's mp_libs); GPUS default 2.  $PYTHON (default
# python3) needs jax with CUDA and pytest.  Passes when pytest says
# "1 passed" (a process's output is shown when it fails); exits non-zero
# otherwise or when a segment of the job is left in /dev/shm.
set -u
repo=$(pwd)
build=$repo/${1:-build}
gpus=${2:-2}
PY=${PYTHON:-python3}
here=$build/tests/gpu  # gpu-env.sh's rule: it sets build from here
. "$here/gpu-env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mp_libs "$tmp"
export MUSTER_BUILD="$build" MUSTER_LIB_DIR="$build/lib" MUSTER_JOB=jaxstore$$
export PYTHONPATH="$repo/adapters/jax${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0 MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-20} XLA_PYTHON_CLIENT_PREALLOCATE=false
MUSTER_TEST_GPUS=$gpus timeout -k 5 "${STORE_TIMEOUT:-300}" "$PY" -m pytest -q -rfE -p no:cacheprovider \
    tests/python/jax/test_store_distributed.py -k gpu
rc=$?
left=$(ls /dev/shm | grep -c "$MUSTER_JOB" || true)
echo "segments left: $left"
[ "$rc" = 0 ] && [ "$left" = 0 ]
