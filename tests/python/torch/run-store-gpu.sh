#!/bin/sh
# muster_torch.distributed on cusolvermp alone: one rank per GPU (nccl)
# meeting over the job's store, solves on column blocks
# (storecase.solve_case: potrs, getrs, syevd f64) and on each rank's own
# block of a 2 x 2 grid (4 GPUs, else GPUs x 1) and of a 1 x GPUs one
# through solve(grid=) (gridcase.gpu_grid_case: potrs, getrs, syevd in f64
# and c128, n = 1003, residuals under 20 n eps, V gathered and checked):
#
#   tests/python/torch/run-store-gpu.sh [BUILD_DIR] [GPUS]     (from the repo root)
#
# BUILD_DIR (default build) with lib/ and deps/ (the cuSOLVERMp wheel,
# unpacked into a temporary folder named by MUSTER_MP_LIBDIR unless that is
# set: tests/gpu/gpu-env.sh's mp_libs); GPUS default 2.  $PYTHON (default
# python3) needs torch with CUDA and pytest.  Passes when pytest says
# "1 passed" (a rank's output is shown when it fails); exits non-zero
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
export MUSTER_BUILD="$build" MUSTER_LIB_DIR="$build/lib" MUSTER_JOB=torchstore$$
export PYTHONPATH="$repo/adapters/torch${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0 MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-20}
MUSTER_TEST_GPUS=$gpus timeout -k 5 "${STORE_TIMEOUT:-300}" "$PY" -m pytest -q -rfE -p no:cacheprovider \
    tests/python/torch/test_store_distributed.py -k gpu
rc=$?
left=$(ls /dev/shm | grep -c "$MUSTER_JOB" || true)
echo "segments left: $left"
[ "$rc" = 0 ] && [ "$left" = 0 ]
