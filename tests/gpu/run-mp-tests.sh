#!/bin/sh
# The cusolvermp GPU tests (docs/gpu-scripts.md), one command from a build
# folder copied to a machine with 1 to 4 GPUs, CUDA 13, the nvidia-nccl-cu13
# wheel in a Python environment (its NCCL is found there), and the
# cuSOLVERMp wheel carried in <build>/deps (no network needed):
#     <build>/tests/gpu/run-mp-tests.sh [N] [--part K/N] [--max-gpus R] [--list]
# (N: matrix order, default 1001; R: use at most R GPUs)
# 1. the provider's host-side unit tests (run-tests mp_);
# 2. the wheel <build>/deps/nvidia_cusolvermp_cu13-*.whl unpacked into a
#    temporary folder named by MUSTER_MP_LIBDIR (unless MUSTER_MP_LIBDIR is set);
# 3. `muster solve --provider cusolvermp`, which checks the residual
#    ("ok":true: under 64 n eps), on 1 rank (1x1 grid) for potrs (nrhs 3, in
#    panels), syevd and syevd --no-vectors x f32, f64, c64, c128; the
#    relayout path on one GPU (MUSTER_MP_COPY=1: gather/scatter kernels);
#    odd and small n; getrs x every dtype; gels (--m 2n, n + 1, n) x every
#    dtype; then, with 2 GPUs, every routine x dtype on 2 processes (1x2
#    grid, relayout over NCCL) and the 2x1 grid; with 4, every routine on 4
#    processes;
# 3b. gpu-test --provider cusolvermp (tests/gpu/gpu_mp.c): getrs and potrs
#    with log det on 1..4 processes (as many as GPUs), every dtype, residuals,
#    A kept, log det against the lapack provider, singular and NaN inputs;
#    gels (m = 2n, n + 1, n) x every dtype on 1..4 processes: the
#    normal-equations residual, A kept, rank-deficient and NaN inputs; a
#    rank SIGKILLed mid-solve (2 GPUs);
# 4. an informational run (printed, not counted): cusolverMpPotrs with all
#    right-hand sides at once (MUSTER_MP_POTRS_NRHS=all); a non-blocking
#    NCCL communicator (MUSTER_MP_NCCL_BLOCKING=0) counted: right on one
#    process, refused on two (cuSOLVERMp 0.8's solvers fail on one there);
# 5. nothing of the job left in /dev/shm.
# --part K/N: the host-side tests in part 1 only, the runs of 3 and 4 dealt
# round-robin, gpu-test's cases by its --part; --list: print what the part
# would run with estimated seconds, run nothing.
# Prints one line per run, the part's elapsed seconds and "N passed, M
# failed"; exits 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
parts_from_args "$@"
n=1001
prev=
for a in "$@"; do
  case $prev:$a in
    --part:* | --max-gpus:*) ;;
    *:[0-9]*) n=$a ;;
    *:--part | *:--max-gpus | *:--list) ;;
    *) echo "usage: run-mp-tests.sh [N] [--part K/N] [--max-gpus R] [--list]" >&2; exit 2 ;;
  esac
  prev=$a
done
export MUSTER_JOB="mpgpu$$"
unset MUSTER_PROVIDER
seed=${MP_GPU_SEED:-$(date +%s)}
t_start=$(date +%s)
if [ "$listing" = 1 ]; then ngpu=${max_gpus:-4}; else
  gpu_info
  ngpu=$(gpu_count)
  [ -n "$max_gpus" ] && [ "$max_gpus" -lt "$ngpu" ] && ngpu=$max_gpus
fi
part_opt=
[ "$part_n" -gt 1 ] && part_opt="--part $part_k/$part_n"
list_opt=
[ "$listing" = 1 ] && list_opt=--list

if [ "$listing" = 0 ] && [ "$part_k" = 1 ]; then
  echo "# host-side unit tests"
  if "$build/tests/run-tests" mp_; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: run-tests mp_"; fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$listing" = 0 ]; then
  mp_libs "$tmp"
  "$muster" providers 2>&1 | grep -i -A2 cusolvermp
fi

# run COUNTED ENV ROUTINE DTYPE RANKS N [options]: cli_run, cusolvermp in processes
run() {
  counted=$1 envset=$2 routine=$3 dtype=$4 ranks=$5 nn=$6
  shift 6
  cli_run "$counted" "$envset" cusolvermp "$routine" "$dtype" processes "$ranks" "$nn" "$@"
}

echo "# n=$n seed=$seed (MP_GPU_SEED=$seed to replay); GPUs: $ngpu; part $part_k/$part_n"
[ "$listing" = 1 ] || cli_header
for dtype in f32 f64 c64 c128; do
  run 1 - potrs "$dtype" 1 "$n" --nrhs 3
  run 1 - syevd "$dtype" 1 "$n"
  run 1 - syevd "$dtype" 1 "$n" --no-vectors
  run 1 - getrs "$dtype" 1 "$n" --nrhs 2
  run 1 - gels "$dtype" 1 "$n" --nrhs 2 --m $((2 * n))
done
run 1 - gels f64 1 "$n" --nrhs 3 --m $((n + 1))
run 1 - gels c128 1 "$n" --nrhs 1 --m "$n"
run 1 MUSTER_MP_COPY=1 getrs c128 1 "$n" --nrhs 1
run 1 MUSTER_MP_COPY=1 potrs f64 1 "$n" --nrhs 2
run 1 MUSTER_MP_COPY=1 syevd c128 1 "$n"
run 1 MUSTER_MP_COPY=1 potrs c64 1 "$n" --nrhs 1
run 1 - potrs f64 1 64 --nrhs 1
run 1 - syevd f32 1 100
run 1 MUSTER_MP_TILE=128 potrs f64 1 3000 --nrhs 4
run 1 MUSTER_MP_TILE=256 syevd f64 1 3000
run 0 MUSTER_MP_POTRS_NRHS=all potrs f64 1 "$n" --nrhs 5
run 1 MUSTER_MP_NCCL_BLOCKING=0 potrs f64 1 "$n" --nrhs 1
if [ "$ngpu" -ge 2 ]; then
  for dtype in f32 f64 c64 c128; do
    run 1 - potrs "$dtype" 2 "$n" --nrhs 3
    run 1 - syevd "$dtype" 2 "$n"
    run 1 - getrs "$dtype" 2 "$n" --nrhs 3
    # refused on more than one process (docs/providers/cusolvermp.md: cuSOLVERMp 0.8's QR)
    expect_refused="gels on 2 processes" run 1 - gels "$dtype" 2 "$n" --nrhs 3 --m $((2 * n))
  done
  expect_refused="gels on 2 processes" run 1 MUSTER_MP_GRID=2x1 gels f64 2 "$n" --nrhs 2 --m $((n + 1))
  expect_refused="getrs on a 2x1 grid" run 1 MUSTER_MP_GRID=2x1 getrs f64 2 "$n" --nrhs 2
  expect_refused="MUSTER_MP_NCCL_BLOCKING=0) on 2 processes" run 1 MUSTER_MP_NCCL_BLOCKING=0 potrs f64 2 "$n" --nrhs 1
  run 1 - syevd f64 2 "$n" --no-vectors
  run 1 MUSTER_MP_GRID=2x1 potrs f64 2 "$n" --nrhs 2
  run 1 MUSTER_MP_GRID=2x1 syevd c64 2 "$n"
  run 1 MUSTER_MP_SCRATCH_MB=1 potrs c128 2 "$n" --nrhs 1
else
  echo "# 1 GPU: the 2-process cases (1x2 and 2x1 grids, relayout over NCCL) are not run"
fi
if [ "$ngpu" -ge 4 ]; then
  run 1 - potrs c64 4 "$n" --nrhs 3
  run 1 - syevd c128 4 "$n"
  run 1 - getrs f32 4 "$n" --nrhs 2
  expect_refused="gels on 4 processes" run 1 - gels f64 4 "$n" --nrhs 2 --m $((2 * n))
fi
if [ "$listing" = 1 ]; then
  echo "# $cli_index muster solve runs in all, ${cli_est} s estimated for this part's"
fi

echo "# gpu-test --provider cusolvermp (getrs, potrs log det, gels, kills; $ngpu GPU(s))"
# shellcheck disable=SC2086 # empty or one option and its value
if "$here/gpu-test" --provider cusolvermp --max-gpus "$ngpu" $part_opt $list_opt; then
  [ "$listing" = 1 ] || pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAILED: gpu-test --provider cusolvermp"; fi
[ "$listing" = 1 ] && exit $((fail > 0))

left=$(job_left "$MUSTER_JOB")
if [ "$left" != 0 ]; then
  echo "FAILED: $left segment(s) of job $MUSTER_JOB left in /dev/shm"
  fail=$((fail + 1))
fi
part_done run-mp-tests.sh "$t_start"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
