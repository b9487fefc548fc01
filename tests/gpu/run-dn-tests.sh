#!/bin/sh
# The cusolverdn GPU tests (docs/gpu-scripts.md), one command from a build
# folder copied to a machine with 1 or 2 GPUs (more are not used):
#     <build>/tests/gpu/run-dn-tests.sh [--measure] [gpu-test options]
# Runs the provider's host-side unit tests (run-tests dn_), then
# gpu-test --provider cusolverdn (getrs, gels and potrs with log det, and
# geqrf, gesvd, polar: --only '[factors]' runs just those, included): on 1
# GPU it skips the cases that need 2 and says how many.
# --part K/N (passed to gpu-test) runs part K of N, the host-side tests in
# part 1 only; --list prints the cases and their estimated seconds, running
# nothing.  --measure then times potri's two paths
# (MUSTER_DN_POTRI=potri|solve, through `muster solve`, 1 rank, f64) against
# raw cusolverDn (raw-dn) at n = 4096, 8192 and 16384.  Ends with the
# part's elapsed seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
measure=0
if [ "${1:-}" = --measure ]; then
  measure=1
  shift
fi
parts_from_args "$@"
t0=$(date +%s)
gpu_info
rc=0
if [ "$listing" = 0 ] && [ "$part_k" = 1 ]; then
  echo "# host-side unit tests (estimate, argument checks)"
  "$build/tests/run-tests" dn_ || rc=1
fi
echo "# gpu-test --provider cusolverdn"
"$here/gpu-test" --provider cusolverdn "$@" || rc=1
if [ "$measure" = 1 ]; then
  echo "# potri paths: muster solve potri f64, 1 rank (median of 3 after 1 warm-up), and raw cusolverDn"
  for n in 4096 8192 16384; do
    for path in potri solve; do
      out=$(MUSTER_DN_POTRI=$path MUSTER_JOB="dnmeasure$$" timeout 120 "$muster" solve potri --n "$n" \
            --ranks 1 --provider cusolverdn --reps 3 --warmup 1 --json 2>&1) || rc=1
      echo "potri n=$n MUSTER_DN_POTRI=$path: $out"
    done
    timeout 120 "$here/raw-dn" potri f64 "$n" 3 || rc=1
  done
fi
[ "$listing" = 1 ] || part_done run-dn-tests.sh "$t0"
exit $rc
