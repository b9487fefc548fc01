#!/bin/sh
# The tiled provider's GPU tests (docs/gpu-testing.md), one command from a
# build folder copied to a machine with 1 to 4 GPUs:
#     <build>/tests/gpu/run-tiled-tests.sh [gpu-test options]
# Runs the provider's host-side unit tests (run-tests tiled_: the schedule,
# the loaded provider), then gpu-test --provider tiled (potrs and log det,
# every dtype x mode x 1/2/4 GPUs, not-PD, NaN, a second call creating
# nothing, kills; lookahead 2-4, the priority stream and the overlapped
# moves: run-tiled-sweep.sh check runs only those): on fewer GPUs it skips the cases that need more and says
# how many.  --part K/N runs part K of N (host tests in part 1 only);
# --list prints the cases and their estimated seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
parts_from_args "$@"
t0=$(date +%s)
gpu_info
rc=0
if [ "$listing" = 0 ] && [ "$part_k" = 1 ]; then
  echo "# host-side unit tests (schedule, estimate, argument checks)"
  "$build/tests/run-tests" tiled_ || rc=1
fi
echo "# gpu-test --provider tiled"
"$here/gpu-test" --provider tiled "$@" || rc=1
echo "# run-tiled-tests.sh: $(( $(date +%s) - t0 )) s"
exit $rc
