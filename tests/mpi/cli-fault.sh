#!/usr/bin/env bash
# tests/mpi/cli-fault.sh SIGNAL TARGET BOUND_S EXPECT [BUILD]
#
# One fault test of `muster solve --launcher mpi` (run-mpi-tests.sh runs it
# inside `unshare -m -p -f --mount-proc`, as root: a private /dev/shm, and
# when it exits the kernel ends whatever is left of the job).  mpirun starts
# 3 ranks solving potrs again and again (n 1500, 50 + 64 solves: far longer
# than the test); 1.5 s after the ranks exist, TARGET gets SIGNAL:
#   TARGET rank1    rank 1's process (KILL or STOP)
#   TARGET mpirun   the launcher (KILL; STOP: it stays stopped 2 s, then
#                   gets SIGKILL, and the bound counts from that)
# Passes when, within BOUND_S seconds, mpirun and every rank have ended (a
# zombie has ended), the job's output matches the regex EXPECT (who said
# why; "" for none: Open MPI ends the ranks of a killed launcher silently), no other process is left in the PID namespace, and the
# private /dev/shm is empty.  Prints the time every rank took to end.
#
# Environment: MPIRUN (mpirun and its options), MUSTER_PROVIDER_PATH,
# MUSTER_TIMEOUT (the stopped rank's bound: the others' deadline).
set -u
sig=$1 target=$2 bound=$3 expect=$4 build=${5:-build}
cd "$(dirname "$0")/../.."
muster=$PWD/$build/bin/muster
mount -t tmpfs -o size=512m,mode=1777 muster-cli-fault /dev/shm ||
  { echo "cli-fault: cannot mount a private /dev/shm (needs root and unshare -m)"; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Open MPI's shared-memory transport (vader) keeps a segment in /dev/shm
# that mpirun removes at the job's end: SIGKILL mpirun and it stays (Open
# MPI's, not muster's, which makes none here).  Those runs use TCP between
# the ranks instead, so the /dev/shm check still sees everything else.
btl=""
[ "$target" = mpirun ] && btl="--mca btl self,tcp"
# shellcheck disable=SC2086
$MPIRUN $btl -np 3 -x MUSTER_TIMEOUT "$muster" solve potrs --launcher mpi --n 1500 --reps 64 --warmup 50 \
  >"$log" 2>&1 &
mp=$!

# shellcheck source=tests/mpi/ending.sh
. tests/mpi/ending.sh
ranks() { pgrep -P "$mp" -x muster; }

t0=$(now)
while [ "$(ranks | wc -l)" -lt 3 ]; do
  if ! kill -0 "$mp" 2>/dev/null || past "$t0" 60; then
    echo "cli-fault: the ranks never started"; cat "$log"; kill "$mp"; exit 1
  fi
  sleep 0.1
done
pids=$(ranks)
victim=$mp
for p in $pids; do
  tr '\0' '\n' <"/proc/$p/environ" | grep -qx 'OMPI_COMM_WORLD_RANK=1' && [ "$target" = rank1 ] && victim=$p
done
sleep 1.5
kill -"$sig" "$victim"
if [ "$target" = mpirun ] && [ "$sig" = STOP ]; then
  sleep 2
  kill -KILL "$victim"
fi
await_end "$bound" "$mp" $pids
wait "$mp" 2>/dev/null
rc=$?
sleep 0.2 # let the last exits finish their unlinks
others=$(ps -e -o pid=,comm= | awk -v me=$$ '$1 != me && $1 != 1 && $2 != "ps" && $2 != "awk" && $2 != "bash"')
leftover=$(ls -A /dev/shm)
sed 's/^/  | /' "$log"
echo "cli-fault: SIG$sig to $target (pid $victim): every rank ended after $took s (bound $bound s), mpirun exit $rc"
[ "$status" = ok ] || { echo "cli-fault: FAIL: $status"; exit 1; }
[ "$rc" != 0 ] || { echo "cli-fault: FAIL: mpirun exited 0 after a fault"; exit 1; }
[ -z "$expect" ] || grep -Eq "$expect" "$log" || { echo "cli-fault: FAIL: the output does not say why (no /$expect/)"; exit 1; }
[ -z "$others" ] || { echo "cli-fault: FAIL: processes left: $others"; exit 1; }
[ -z "$leftover" ] || { echo "cli-fault: FAIL: left in /dev/shm: $leftover"; exit 1; }
echo "cli-fault: no process left, /dev/shm empty after the job"
exit 0
