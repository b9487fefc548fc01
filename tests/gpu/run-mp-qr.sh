#!/bin/sh
# The cusolvermp provider's geqrf cases alone (docs/gpu-scripts.md), one
# command from a build folder copied to a machine with up to 4 GPUs, CUDA 13,
# the nvidia-nccl-cu13 wheel in a Python environment (its NCCL is found
# there) and the cuSOLVERMp wheel carried in <build>/deps (no network):
#     <build>/tests/gpu/run-mp-qr.sh [--max-gpus R]
# gpu-test --provider cusolvermp --only '[mp-qr]' (tests/gpu/gpu_mp_qr.c):
# geqrf thin, full and wide on 1, 2 and 4 processes, checked on the host by
# ||A - Q R|| / ||A||, ||Q^H Q - I|| and R upper triangular (chk_factors,
# under 64 max(m, n) eps), every rank's B the same; NaN in A refused on
# every rank with nothing written; on 2 and 4 processes with
# MUSTER_MP_QR_GRIDS=1, and once without it (refused).  About 100 s on 4
# GPUs; the whole run is cut at 140 s (timeout -k 5).  Prints one "ok" or
# "not ok" line per case, then "N passed, M failed, K skipped (...)" and
# "run-mp-qr.sh: N passed, M failed"; exits 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
parts_from_args "$@"
ngpu=$(gpu_count)
[ -n "$max_gpus" ] && [ "$max_gpus" -lt "$ngpu" ] && ngpu=$max_gpus
export MUSTER_JOB="mpqr$$"
unset MUSTER_PROVIDER MUSTER_MP_QR_GRIDS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gpu_info
mp_libs "$tmp"
t_start=$(date +%s)
timeout -k 5 140 "$here/gpu-test" --provider cusolvermp --only '[mp-qr]' --max-gpus "$ngpu" --no-kill >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
pass=$(grep -c '^ok ' "$tmp/out")
fail=$(grep -c '^not ok ' "$tmp/out")
if [ "$rc" -ne 0 ] && [ "$fail" = 0 ]; then
  echo "not ok - gpu-test ended with status $rc (124: over 140 s)"
  fail=1
fi
left=$(job_left "$MUSTER_JOB")
if [ "$left" != 0 ]; then
  echo "not ok - $left segment(s) of job $MUSTER_JOB left in /dev/shm"
  fail=$((fail + 1))
fi
echo "run-mp-qr.sh: $pass passed, $fail failed ($(($(date +%s) - t_start)) s, $ngpu GPU(s))"
[ "$fail" = 0 ]
