#!/bin/sh
# The GPU test command (docs/gpu-testing.md): run from a build folder made
# anywhere (no GPU needed to build) and copied to a machine with GPUs:
#     <build>/tests/gpu/run-gpu-tests.sh [gpu-test options]
# Runs the C unit tests of the provider's host side, then gpu-test (every
# routine x dtype x threads/processes/all x 1, 2, 4 GPUs, kill tests;
# getrs and potrs's log det on 1 to 4 GPUs).  --part K/N (passed to
# gpu-test) runs part K of N, the host-side tests in part 1 only; --list
# prints the cases and their estimated seconds, running nothing.  Ends with
# the part's elapsed seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
parts_from_args "$@"
t0=$(date +%s)
rc=0
if [ "$listing" = 0 ] && [ "$part_k" = 1 ]; then
  echo "# host-side unit tests (plans, run_on_devices)"
  "$build/tests/run-tests" devices cmg_ cuc_ || rc=1
fi
echo "# gpu-test"
"$here/gpu-test" "$@" || rc=1
[ "$listing" = 1 ] || part_done run-gpu-tests.sh "$t0"
exit $rc
