#!/bin/sh
# The GPU smoke test (docs/gpu-testing.md): every GPU provider x routine x
# GPU count (1, 2, 4: as many as there are) x mode once, and one kill per
# provider, in a few minutes, from a build folder copied to a GPU machine
# (with build/deps holding the cuSOLVERMp wheel, as for run-mp-tests.sh):
#     <build>/tests/gpu/run-gpu-smoke.sh [--max-gpus R] [--list]
# 1. gpu-test --smoke for cusolvermg, cusolverdn and cusolvermp (one case
#    per routine x mode x GPU count, dtypes rotated over f32, f64, c64,
#    c128, one solve each, residuals checked; the kill of a leader
#    mid-solve; cusolvermp in processes only, one per GPU);
# 2. `muster solve` (residual checked) where gpu-test has no such case:
#    cusolvermp syevd on 1, 2 and 4 processes, and cusolverdn every routine
#    with 4 ranks on 4 GPUs (threads and processes);
# 3. nothing of the job left in /dev/shm.
# --list prints what would run with estimated seconds, running nothing.
# Prints each step's elapsed seconds and "N passed, M failed"; exits 1 on
# any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
parts_from_args "$@"
for a in "$@"; do
  case $a in --list | --max-gpus | [0-9]*) ;; *) echo "usage: run-gpu-smoke.sh [--max-gpus R] [--list]" >&2; exit 2 ;; esac
done
export MUSTER_JOB="smoke$$"
unset MUSTER_PROVIDER
seed=${SMOKE_SEED:-$(date +%s)}
t_start=$(date +%s)
if [ "$listing" = 1 ]; then ngpu=${max_gpus:-4}; else
  gpu_info
  ngpu=$(gpu_count)
  [ -n "$max_gpus" ] && [ "$max_gpus" -lt "$ngpu" ] && ngpu=$max_gpus
  if [ "$ngpu" -lt 1 ]; then echo "run-gpu-smoke.sh: no GPU here" >&2; exit 1; fi
fi
list_opt=
[ "$listing" = 1 ] && list_opt=--list
echo "# GPUs: $ngpu seed=$seed (SMOKE_SEED=$seed to replay muster solve's matrices)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$listing" = 1 ] || mp_libs "$tmp"

for prov in cusolvermg cusolverdn cusolvermp; do
  t0=$(date +%s)
  echo "# gpu-test --smoke --provider $prov"
  # shellcheck disable=SC2086 # empty or --list
  if "$here/gpu-test" --smoke --provider "$prov" --max-gpus "$ngpu" $list_opt; then
    [ "$listing" = 1 ] || pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAILED: gpu-test --smoke --provider $prov"; fi
  [ "$listing" = 1 ] || echo "# gpu-test --smoke --provider $prov: $(($(date +%s) - t0)) s"
done

t0=$(date +%s)
echo "# muster solve"
[ "$listing" = 1 ] || cli_header
for r in 1 2 4; do
  [ "$r" -le "$ngpu" ] || continue
  case $r in 1) dt=c128 ;; 2) dt=f32 ;; *) dt=c64 ;; esac # 1 GPU: the dtype gpu-test --smoke has not
  cli_run 1 - cusolvermp syevd "$dt" processes "$r" 1001
done
if [ "$ngpu" -ge 4 ]; then
  cli_run 1 - cusolverdn potrs f32 threads 4 1001 --nrhs 3
  cli_run 1 - cusolverdn potri f64 processes 4 1001
  cli_run 1 - cusolverdn syevd c64 threads 4 1001
  cli_run 1 - cusolverdn getrs c128 processes 4 1001 --nrhs 2
  cli_run 1 - cusolverdn gels f32 threads 4 601 --nrhs 2
  cli_run 1 - cusolverdn potrs f64 processes 4 1001 --nrhs 3
  cli_run 1 - cusolverdn potri c64 threads 4 1001
  cli_run 1 - cusolverdn syevd c128 processes 4 1001
  cli_run 1 - cusolverdn getrs f32 threads 4 1001 --nrhs 2
  cli_run 1 - cusolverdn gels f64 processes 4 601 --nrhs 2
fi
if [ "$listing" = 1 ]; then
  echo "# $cli_index muster solve runs, ${cli_est} s estimated"
  exit $((fail > 0))
fi
echo "# muster solve: $(($(date +%s) - t0)) s"

left=$(job_left "$MUSTER_JOB")
if [ "$left" != 0 ]; then
  echo "FAILED: $left segment(s) of job $MUSTER_JOB left in /dev/shm"
  fail=$((fail + 1))
fi
echo "# run-gpu-smoke.sh: $(($(date +%s) - t_start)) s on $ngpu GPU(s)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
