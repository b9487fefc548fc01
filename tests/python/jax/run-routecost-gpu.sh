#!/bin/sh
# The store route's fixed cost per call on GPUs (issue 24): muster_jax
# .distributed.solve of a potrs n = 64 over a store set, one process per
# GPU, GPU arrays, eagerly and inside jax.jit, the default choice (a
# one-node engine through the set's group) and cusolvermp forced
# (tests/python/jax/bench_store_route.py --gpu: per mode the median and
# mean seconds a call, the store rounds, key-value operations and their
# time).  With BASE_DIR (a build of the branch's base, e.g. main's
# build/lib and build/tests/gpu carried as build-main/), base and build
# alternate twice, so that both are measured on the same machine:
#
#   tests/python/jax/run-routecost-gpu.sh [BUILD_DIR] [GPUS] [BASE_DIR]   (from the repo root)
#
# BUILD_DIR (default build) with lib/, tests/gpu/ and deps/ (the cuSOLVERMp
# wheel, tests/gpu/gpu-env.sh's mp_libs); GPUS default 4; $PYTHON (default
# python3): jax with CUDA.  Each run takes about 30-60 s (4 modes x 220
# calls, plus jax's start); exits non-zero when a run fails.
set -u
repo=$(pwd)
build=$repo/${1:-build}
gpus=${2:-4}
base=${3:+$repo/$3}
PY=${PYTHON:-python3}
here=$build/tests/gpu  # gpu-env.sh's rule: it sets build from here
. "$here/gpu-env.sh"
mp_libs_temp
export NCCL_NVLS_ENABLE=0 MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-20} XLA_PYTHON_CLIENT_PREALLOCATE=false
rc=0
for which in ${base:+"$base"} "$build" ${base:+"$base"} "$build"; do
  echo "=== $which"
  MUSTER_BUILD=$which MUSTER_JOB=routecost$$ timeout -k 5 240 "$PY" tests/python/jax/bench_store_route.py --gpu \
      --procs "$gpus" --calls 200 --warm 20 || rc=1
done
left=$(ls /dev/shm | grep -c "routecost$$" || true)
echo "segments left: $left"
[ "$rc" = 0 ] && [ "$left" = 0 ]
