#!/bin/sh
# muster_jax across processes against jaxmg on the GPU machine (issue 24's
# benchmark, and issue 29's gesvd and polar: --set factors;
# docs/performance/jax-multiprocess.md), from the repo root with a build
# folder carried there:
#
#   tests/python/jax/run-bench-mp-gpu.sh [BUILD_DIR] [bench_mp_gpu.py options]
#   e.g.  tests/python/jax/run-bench-mp-gpu.sh build --gpus 4 --rows potrs --budget 420
#         tests/python/jax/run-bench-mp-gpu.sh build --set factors --gpus 4
#
# BUILD_DIR (default build): lib/ (libmuster, libmuster_jax, the providers),
# bin/ (muster: the versions; shmdump: segments left), tests/gpu/gpu-env.sh,
# and what cuSOLVERMp and jaxmg need:
#   deps/nvidia_cusolvermp_cu13-0.8*.whl   cuSOLVERMp 0.8 for muster (gpu-env.sh's
#                                          mp_libs), unless MUSTER_MP_LIBDIR is set
#                                          or deps091 is there
#   deps/jaxmg-1.4.1-*.whl                 jaxmg (optional: without it every row
#                                          says "jaxmg: not installed")
#   deps091/mp091.tar.xz                   cuSOLVERMp 0.9.1, cuBLASMp 0.10 and an
#                                          NCCL >= 2.29 (tests/gpu/make-mp091-deps.sh):
#                                          jaxmg 1.4.1 needs them (the machine's
#                                          NCCL 2.28.9 lacks ncclCommQueryProperties),
#                                          and muster's gesvd and polar (0.8 has none)
# With deps091, every process runs on it, muster's and jaxmg's alike: its
# NCCL preloaded (XLA's communicator, which jaxmg borrows, cuSOLVERMp's and
# cuBLASMp's: one NCCL in each process), muster's provider pointed at it
# (MUSTER_MP_LIBDIR, as run-mp091-tests.sh), and jaxmg's processes given
# the wheel and the libraries on PYTHONPATH (JAXMG_SITE).  Without it
# jaxmg's rows say why it cannot run.
# The JSON goes to --json FILE (default $OUT/bench-mp.json, else
# ./bench-mp.json); the whole run is cut at --budget (default 480 s) + 60 s.
# Prints a line per column as it finishes, then the table; exits 1 when a
# column failed or answered wrongly, or a segment of the job is left in
# /dev/shm.
set -u
build=build
case "${1:-}" in -*|"") ;; *) build=$1; shift ;; esac
repo=$(pwd)
build=$(cd "$build" && pwd)
here=$build/tests/gpu  # gpu-env.sh's rule: it sets build from here
. "$here/gpu-env.sh"
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arch=$build/deps091/mp091.tar.xz
site=
if [ -f "$arch" ] && timeout -k 5 60 tar -xJf "$arch" -C "$tmp"; then
  site=$tmp/site
  export MUSTER_MP_LIBDIR="$site/nvidia/nccl/lib:$site/nvidia/cu13/lib:$site/nvidia/cublasmp/cu13/lib"
  export LD_PRELOAD="$site/nvidia/nccl/lib/libnccl.so.2${LD_PRELOAD:+:$LD_PRELOAD}"
  echo "# cuSOLVERMp 0.9.1, cuBLASMp 0.10 and NCCL from $arch, for every process"
fi
mp_libs "$tmp"
export MUSTER_BUILD="$build" MUSTER_LIB_DIR="$build/lib" MUSTER_JOB=jbench$$
export PYTHONPATH="$repo/adapters/jax${PYTHONPATH:+:$PYTHONPATH}"
# XLA's pool (not preallocated) grows by regions that double and are never
# given back, up to XLA_PYTHON_CLIENT_MEM_FRACTION of the GPU (default
# 0.75): on 2026-11-27 (2 x H200, potrs 65536, 64 GiB of XLA's peak in
# use) 124 GiB of the GPU were in use and cusolvermp's 18 GiB did not fit.
# The engines allocate outside that pool: cap it at half (docs/jax.md).
export MUSTER_TIMEOUT="${MUSTER_TIMEOUT:-120}" XLA_PYTHON_CLIENT_PREALLOCATE=false
export XLA_PYTHON_CLIENT_MEM_FRACTION="${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.5}"

whl=$(ls "$build"/deps/jaxmg-*.whl 2>/dev/null | head -1)
if [ -n "$whl" ]; then
  "$PY" -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$whl" "$tmp/jaxmg"
  export JAXMG_SITE="$tmp/jaxmg${site:+:$site}"  # jaxmg finds libcusolverMp.so.0 under sys.path's nvidia/cu13/lib
  if [ -z "$site" ]; then
    export JAXMG_MISSING="it needs cuSOLVERMp 0.9.1, cuBLASMp 0.10 and NCCL >= 2.29 ($arch, made by tests/gpu/make-mp091-deps.sh), not found"
    echo "# $(basename "$whl") found, but $JAXMG_MISSING"
  fi
fi

budget=480
json=${OUT:-.}/bench-mp.json
prev=
for a in "$@"; do
  case $prev in --budget) budget=${a%.*} ;; --json) json= ;; esac
  prev=$a
done
[ -n "$json" ] && set -- --json "$json" "$@"
timeout -k 5 $((budget + 60)) "$PY" tests/python/jax/bench_mp_gpu.py "$@"
rc=$?
left=$(job_left "$MUSTER_JOB")
echo "segments left: $left"
[ "$rc" = 0 ] && [ "$left" = 0 ]
