#!/usr/bin/env bash
# tests/mpi/fault.sh SIGNAL NP BOUND_S EXPECT [LOOP ARGS...]
#
# One fault test of the scalapack provider (run-mpi-tests.sh runs it inside
# `unshare -m -p -f --mount-proc`, as root: its own /dev/shm, and when it
# exits the kernel ends whatever of the job is left): NP ranks of the driver's "loop" mode solve again
# and again; once every rank is inside its second solve, rank 1 gets SIGNAL
# (KILL or STOP).  Passes when, within BOUND_S seconds of the signal,
# mpirun and every rank have ended (a zombie has ended: only its parent may
# reap it), the job's output matches the regex EXPECT (who said why), and
# this mount namespace's private /dev/shm (a fresh tmpfs, so everything in
# it is the job's) is empty afterwards.
#
# Environment: DRV (the driver), MPIRUN (mpirun and its options).
set -u
sig=$1 np=$2 bound=$3 expect=$4
shift 4
mount -t tmpfs -o size=512m,mode=1777 muster-fault /dev/shm ||
  { echo "fault: cannot mount a private /dev/shm (needs root and unshare -m)"; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086
$MPIRUN -np "$np" "$DRV" loop "$@" >"$log" 2>&1 &
mp=$!

# shellcheck source=tests/mpi/ending.sh
. "$(dirname "$0")/ending.sh"

t0=$(now)
while [ "$(grep -c '^loop rank' "$log")" -lt "$np" ]; do
  if ! kill -0 "$mp" 2>/dev/null || past "$t0" 120; then
    echo "fault: the ranks never reached their second solve"; cat "$log"; kill "$mp"; exit 1
  fi
  sleep 0.1
done
pids=$(awk '/^loop rank/ {print $5}' "$log")
victim=$(awk '/^loop rank 1 / {print $5}' "$log")
sleep 0.5
kill -"$sig" "$victim"
await_end "$bound" "$mp" $pids
wait "$mp" 2>/dev/null
rc=$?
sleep 0.2 # let the last exits finish their unlinks
leftover=$(ls -A /dev/shm)
sed 's/^/  | /' "$log"
echo "fault: SIG$sig to rank 1 (pid $victim): every rank ended after $took s (bound $bound s), mpirun exit $rc"
[ "$status" = ok ] || { echo "fault: FAIL: $status"; exit 1; }
grep -Eq "$expect" "$log" || { echo "fault: FAIL: the output does not say why (no /$expect/)"; exit 1; }
[ -z "$leftover" ] || { echo "fault: FAIL: left in /dev/shm: $leftover"; exit 1; }
echo "fault: /dev/shm empty after the job"
exit 0
