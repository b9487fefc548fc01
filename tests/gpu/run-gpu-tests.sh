#!/bin/sh
# The GPU test command (docs/gpu-testing.md): run from a build folder made
# anywhere (no GPU needed to build) and copied to a machine with GPUs:
#     <build>/tests/gpu/run-gpu-tests.sh [gpu-test options]
# Runs the C unit tests of the provider's host side, then gpu-test (every
# routine x dtype x threads/processes/all x 1, 2, 4 GPUs, kill tests;
# getrs and potrs's log det on 1 to 4 GPUs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../.." && pwd)
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers"
export NCCL_NVLS_ENABLE=0
rc=0
echo "# host-side unit tests (plans, run_on_devices)"
"$build/tests/run-tests" devices cmg_ cuc_ || rc=1
echo "# gpu-test"
"$here/gpu-test" "$@" || rc=1
exit $rc
