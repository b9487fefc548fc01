#!/bin/sh
# The cusolverdn GPU tests (docs/gpu-testing.md), one command from a build
# folder copied to a machine with 1 or 2 GPUs (about 3 minutes on 1 H100):
#     <build>/tests/gpu/run-dn-tests.sh [--measure] [gpu-test options]
# Runs the provider's host-side unit tests (run-tests dn_), then
# gpu-test --provider cusolverdn (getrs, gels and potrs with log det
# included: about 130 more cases, one process each, a few minutes more; not
# timed on a GPU yet): on 1 GPU it skips the cases that need 2 and says how
# many.  --measure then times potri's two paths
# (MUSTER_DN_POTRI=potri|solve, through `muster solve`, 1 rank, f64) against
# raw cusolverDn (raw-dn) at n = 4096, 8192 and 16384.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../.." && pwd)
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers"
export NCCL_NVLS_ENABLE=0
measure=0
if [ "${1:-}" = --measure ]; then
  measure=1
  shift
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
rc=0
echo "# host-side unit tests (estimate, argument checks)"
"$build/tests/run-tests" dn_ || rc=1
echo "# gpu-test --provider cusolverdn"
"$here/gpu-test" --provider cusolverdn "$@" || rc=1
if [ "$measure" = 1 ]; then
  echo "# potri paths: muster solve potri f64, 1 rank (median of 3 after 1 warm-up), and raw cusolverDn"
  for n in 4096 8192 16384; do
    for path in potri solve; do
      out=$(MUSTER_DN_POTRI=$path MUSTER_JOB="dnmeasure$$" timeout 120 "$build/bin/muster" solve potri --n "$n" \
            --ranks 1 --provider cusolverdn --reps 3 --warmup 1 --json 2>&1) || rc=1
      echo "potri n=$n MUSTER_DN_POTRI=$path: $out"
    done
    timeout 120 "$here/raw-dn" potri f64 "$n" 3 || rc=1
  done
fi
exit $rc
