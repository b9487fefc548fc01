#!/bin/sh
# An adapter's store-bootstrap GPU test (its test_store_distributed.py -k
# gpu: one process per GPU meeting over the framework's store, solves with
# residuals on column blocks, by the default choice, which on one node may
# be a one-node engine, and by cusolvermp, and on grid pieces by
# cusolvermp; then the last process SIGKILLed, and SIGSTOPped, inside
# cusolvermp's syevd: every survivor names it, storefault.py).  Called by tests/python/jax/run-store-gpu.sh and
# tests/python/torch/run-store-gpu.sh (what each runs is said there):
#
#   tests/python/run-store-gpu.sh jax|torch [BUILD_DIR] [GPUS]     (from the repo root)
#
# STORE_TESTS: pytest's -k (default gpu: all three; solves_on_gpus: the
# solves alone).  STORE_TIMEOUT (default 420 s): the whole run's limit;
# MUSTER_TEST_BUDGET (default 100 s under it): each job's.
# BUILD_DIR (default build) with lib/ and deps/ (the cuSOLVERMp wheel,
# unpacked into a temporary folder named by MUSTER_MP_LIBDIR unless that is
# set: tests/gpu/gpu-env.sh's mp_libs); GPUS default 2.  $PYTHON (default
# python3) needs the framework with CUDA and pytest.  Passes when pytest
# says "3 passed" (a process's output is shown when it fails; the passed
# tests' prints too: which of gels, geqrf, gesvd, polar ran, and why
# cusolvermp skipped the others, routinecase.py); exits
# non-zero otherwise or when a segment of the job is left in /dev/shm.
set -u
adapter=$1
repo=$(pwd)
build=$repo/${2:-build}
gpus=${3:-2}
PY=${PYTHON:-python3}
here=$build/tests/gpu  # gpu-env.sh's rule: it sets build from here
. "$here/gpu-env.sh"
mp_libs_temp
export MUSTER_BUILD="$build" MUSTER_LIB_DIR="$build/lib" MUSTER_JOB=${adapter}store$$
export PYTHONPATH="$repo/adapters/$adapter${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0 MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-20} XLA_PYTHON_CLIENT_PREALLOCATE=false
# each job's budget under the whole run's, so that a job still running is
# killed with its processes' output and Python stacks shown (storecase.run_workers)
st=${STORE_TIMEOUT:-420}
export MUSTER_TEST_BUDGET=${MUSTER_TEST_BUDGET:-$((st - 100))}
MUSTER_TEST_GPUS=$gpus timeout -k 5 "$st" "$PY" -m pytest -q -rfEP -p no:cacheprovider \
    "tests/python/$adapter/test_store_distributed.py" -k "${STORE_TESTS:-gpu}"
rc=$?
left=$(ls /dev/shm | grep -c "$MUSTER_JOB" || true)
echo "segments left: $left"
[ "$rc" = 0 ] && [ "$left" = 0 ]
