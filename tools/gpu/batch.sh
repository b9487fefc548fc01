#!/bin/bash
# tools/gpu/batch.sh STEP... - several GPU steps in one device command, under
# one budget (the device tool allows 10 minutes a command and 30 a session:
# docs/gpu-testing.md "Not yet run" lists what waits).  From the repo root
# on the GPU machine, with the build folder carried:
#
#     BUDGET=560 bash tools/gpu/batch.sh probe jax4-091 bench2-rest
#
# Each step's whole output goes to $OUT/STEP.log (step names carry no '@':
# such a file does not come back from the device), its last $TAIL lines
# (default 25) to stdout with its exit status and seconds; a step is
# skipped when less than its need (below) is left of BUDGET seconds
# (default 560), and cut 5 s before the budget's end.  The store steps'
# limit (STORE_TIMEOUT of tests/python/run-store-gpu.sh) is the budget left
# less 10 s, so that a job still running is cut by its own budget
# (MUSTER_TEST_BUDGET: 100 s under that limit, else as said), its
# processes' stacks and output shown.  Steps:
#   jax4, jax2            muster_jax's store script on 4 / 2 GPUs, cuSOLVERMp
#                         0.8 (the wheel in build/deps); jax4 and jax4-091
#                         need 480 s (the solves test alone ran past 320 s
#                         on 4 x H200, 2026-11-28): run them first
#   jax4-091, jax2-091    the same on 0.9.1 (build/deps091: MUSTER_MP_LIBDIR
#                         and its NCCL preloaded, as run-bench-mp-gpu.sh)
#   jax4-091-solves       the solves test alone (STORE_TESTS=solves_on_gpus),
#                         on 0.9.1, with the whole budget left: its workers'
#                         MUSTER_TEST_BUDGET 30 s under it (needs 420 s)
#   torch4, torch2        muster_torch's store script (0.8)
#   torch4-091, torch2-091  the same on 0.9.1 (issue 29: torch's gesvd /
#                         polar on the release that has them)
#   prejoin2              test_prejoin.py's mesh cases on 2 GPUs (the
#                         staging fault before a device joins; ~20 s)
#   probe                 run-probe-jit-polar.sh 4 (0.9.1)
#   mpi                   run-mpi-gpu.sh with the budget left (its last three),
#                         on 0.9.1 (use091) when build/deps holds no
#                         cuSOLVERMp wheel and MUSTER_MP_LIBDIR is not set
#   bench2-rest           issue 24's three 2-GPU rows that ran short of memory
#   bench2, bench4        issue 24's whole table on 2 / 4 GPUs
#   bench2-more           what the 2026-11-27 23:05 run of bench2 left: muster's
#                         rows from potrs 65536 on, jaxmg's every row (into
#                         $OUT/bench-mp-2.json; a copy of that run's JSON in
#                         build/deps is added to)
#   factors2              the gesvd / polar rows on 2 GPUs (issue 29)
#   bench2-65536          potrs 65536 on 2 GPUs again, each column in fresh
#                         processes (its one-node column failed for memory,
#                         third in its processes, on 2026-11-27)
#   factors4              the gesvd / polar rows on 4 GPUs (issue 29)
#   factors4-default      the default column alone of the factors on 4 GPUs
#                         (the choice fixed after 2026-11-28's factors4)
#   factors1-gesvd, factors1-polar  the factors' 1-GPU rows (cusolverDn's
#                         baseline, the dn column), one routine a step
#   gap2, gap4            potrs' one-node and default columns alone on 2 / 4
#                         GPUs (16384, 32768; 65536 on 4): the default's gap
#                         after the store route stopped asking for the factor;
#                         MUSTER_LOG=debug: every rank's staging and engine
#                         milliseconds of each call in the log
#   tiled-check           run-tiled-sweep.sh check: the tiled engine's
#                         lookahead and overlap cases (issue 27; 189 s on
#                         4 x H200, 2026-11-28)
#   tiled-bench           run-tiled-sweep.sh bench (< 300 s)
#   smoke                 run-gpu-smoke.sh (every GPU provider once)
# The benchmark steps need build/deps with jaxmg's wheel and build/deps091
# (the 0.8 wheel and deps091 together pass 64 MiB: carry one or the other).
set -u
export PYTHON=${PYTHON:-python3} NCCL_NVLS_ENABLE=0
T0=${T0:-$(date +%s)}
BUDGET=${BUDGET:-560}
OUT=${OUT:-/tmp/gpu-batch}
mkdir -p "$OUT"
left() { echo $((BUDGET - ($(date +%s) - T0))); }

use091() { # cuSOLVERMp 0.9.1 from build/deps091's archive (unpacked in MP091_DIR)
  local dir=${MP091_DIR:-/tmp/mp091}
  [ -d $dir/site ] || { mkdir -p $dir && tar -xJf build/deps091/mp091.tar.xz -C $dir; } || return 1
  export MUSTER_MP_LIBDIR=$dir/site/nvidia/nccl/lib:$dir/site/nvidia/cu13/lib:$dir/site/nvidia/cublasmp/cu13/lib
  export LD_PRELOAD=$dir/site/nvidia/nccl/lib/libnccl.so.2
}

# cuSOLVERMp for run-mpi-gpu.sh: what is set, else the 0.8 wheel in
# build/deps (gpu-env.sh's mp_libs unpacks it), else 0.9.1's archive
mp_any() {
  [ -n "${MUSTER_MP_LIBDIR:-}" ] && return 0
  ls build/deps/nvidia_cusolvermp_cu13-*.whl >/dev/null 2>&1 && return 0
  use091 && return 0
  echo "batch.sh: no cuSOLVERMp: no build/deps/nvidia_cusolvermp_cu13-*.whl, no build/deps091/mp091.tar.xz" >&2
  return 1
}

store() { # ADAPTER GPUS: its store script, cut 10 s before the budget's end
  STORE_TIMEOUT=$(($(left) - 10)) sh "tests/python/$1/run-store-gpu.sh" build "$2"
}

bench() { # GPUS JSON [options]
  local g=$1 json=$2
  shift 2
  sh tests/python/jax/run-bench-mp-gpu.sh build --gpus "$g" --budget $(($(left) - 70)) --json "$OUT/$json" "$@"
}

step() {
  case $1 in
    jax4) store jax 4 ;;
    jax2) store jax 2 ;;
    jax4-091) use091 && store jax 4 ;;
    jax2-091) use091 && store jax 2 ;;
    jax4-091-solves) use091 && STORE_TESTS=solves_on_gpus MUSTER_TEST_BUDGET=$(($(left) - 30)) store jax 4 ;;
    torch4) store torch 4 ;;
    torch2) store torch 2 ;;
    torch4-091) use091 && store torch 4 ;;
    torch2-091) use091 && store torch 2 ;;
    prejoin2) MUSTER_BUILD=build MUSTER_JAX_PLATFORM=cuda CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1} \
      $PYTHON -m pytest -q -p no:cacheprovider tests/python/jax/test_prejoin.py -k "not store" ;;
    probe) bash tests/python/jax/run-probe-jit-polar.sh 4 ;;
    mpi) mp_any && BUDGET=$(($(left) - 20)) bash build/tests/gpu/run-mpi-gpu.sh ;;
    bench2-rest) bench 2 bench-mp-2-rest.json --rows potrs:65536,syevd:16384,getrs:16384 ;;
    bench2) bench 2 bench-mp-2.json ;;
    bench4) bench 4 bench-mp-4.json ;;
    bench2-more)
      [ -f build/deps/bench-mp-2.json ] && cp build/deps/bench-mp-2.json "$OUT/"
      bench 2 bench-mp-2.json --columns mp,mp_grid,onenode,default --rows potrs:65536,syevd:8192,syevd:16384,getrs:16384
      rc=$?
      bench 2 bench-mp-2.json --columns jaxmg && return $rc ;;
    factors2) bench 2 bench-mp-factors-2.json --set factors ;;
    bench2-65536) bench 2 bench-mp-2-65536.json --rows potrs:65536 ;;
    factors4) bench 4 bench-mp-factors-4.json --set factors ;;
    factors4-default) bench 4 bench-mp-factors-4-default.json --set factors --columns default ;;
    factors1-gesvd) bench 1 bench-mp-factors-1.json --set factors --rows gesvd ;;
    factors1-polar) bench 1 bench-mp-factors-1.json --set factors --rows polar ;;
    gap2) MUSTER_LOG=debug bench 2 bench-mp-gap-2.json --rows potrs:16384,potrs:32768 --columns onenode,default ;;
    gap4) MUSTER_LOG=debug bench 4 bench-mp-gap-4.json --rows potrs:16384,potrs:32768,potrs:65536 --columns onenode,default ;;
    tiled-check) sh build/tests/gpu/run-tiled-sweep.sh check ;;
    tiled-bench) sh build/tests/gpu/run-tiled-sweep.sh bench ;;
    smoke) sh build/tests/gpu/run-gpu-smoke.sh ;;
    *) echo "batch.sh: unknown step $1" >&2; return 2 ;;
  esac
}

need() {
  case $1 in
    jax4 | jax4-091) echo 480 ;;
    jax4-091-solves) echo 420 ;;
    torch4*) echo 250 ;;
    mpi) echo 180 ;;
    tiled-check) echo 200 ;;
    tiled-bench) echo 300 ;;
    smoke) echo 240 ;;
    bench*) echo 200 ;;
    gap2) echo 120 ;;
    gap4 | factors1-polar) echo 250 ;;
    factors4-default) echo 250 ;;
    factors*) echo 400 ;;
    *) echo 60 ;;
  esac
}

if [ "${1:-}" = --one ]; then
  step "$2"
  exit $?
fi
nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader 2>/dev/null
for s in "$@"; do
  l=$(left)
  if [ "$l" -lt "$(need "$s")" ]; then
    echo "=== $s: skipped ($l s left, needs $(need "$s"))"
    continue
  fi
  echo "=== $s ($l s left)"
  t=$(date +%s)
  T0=$T0 BUDGET=$BUDGET OUT=$OUT timeout -k 5 $((l - 5)) bash "$0" --one "$s" > "$OUT/$s.log" 2>&1 < /dev/null
  rc=$?
  tail -n "${TAIL:-25}" "$OUT/$s.log" | cut -c1-400
  echo "=== $s: exit $rc, $(($(date +%s) - t)) s, /dev/shm entries: $(find /dev/shm -mindepth 1 -maxdepth 1 | wc -l)"
done
