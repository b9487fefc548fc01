#!/usr/bin/env bash
# tests/mpi/deadline.sh [BUILD] - the deadline of a kind mpi collective call
# without the heartbeat is MUSTER_TIMEOUT + 4 x the chosen provider's
# expected seconds
# (runtime/solve/collective.c; docs/bootstrap.md), through `muster solve
# --launcher mpi` on 2 ranks with colltwo, the collective test provider
# (tests/providers/testprov_v2.h): TESTPROV_EST gives its estimate,
# TESTPROV_BLOCK_S=S makes a call that takes S s and then returns (its
# answer is no solution: the CLI's check then fails, exit 1, and rank 0's
# "time" line shows that the call ran to its end),
# TESTPROV_BLOCK=1 one that never returns until cancelled.  MUSTER_TIMEOUT 1
# throughout, and MUSTER_MPI_HEARTBEAT=0: the deadline is the watch of a
# process without the heartbeat (with it, a call on live ranks has none:
# tests/mpi/cli.sh "heartbeat", tests/mpi/stop.sh).
#
#   long        estimate 0.5 s (deadline 1 + 4 x 0.5 = 3 s), a 2 s call:
#               not cancelled, the estimate asked once per solve
#   stuck       the same estimate, a call that never returns: cancelled on
#               every rank no earlier than 3 s, each names the deadline and
#               where it came from
#   forced      MUSTER_PROVIDER=colltwo (no choice made): the same 2 s call
#               still passes, the forced provider's estimate asked once
#   cost        no estimate, a cost table of 0.5 s: the 2 s call passes, and
#               a stuck one names the table
#   tiny        estimate 0.001 s: a stuck call is cancelled at ~1 s
#               (MUSTER_TIMEOUT), the message says so
#   none        no estimate, no table: the message is MUSTER_TIMEOUT's alone
# Ends with "deadline: P passed, F failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
MUSTER=$PWD/$BUILD/bin/muster
: "${MPIRUN:=mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1}"
pass=0 fail=0
tmp=$(mktemp -d /tmp/muster-deadline.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err qlog=$tmp/qlog
mkdir -p "$tmp/prov/potrs"
ln -s "$PWD/$BUILD/tests/providers/testprov_coll2.so" "$tmp/prov/potrs/colltwo.so"
export MUSTER_PROVIDER_PATH=$tmp/prov MUSTER_TIMEOUT=1 MUSTER_MPI_HEARTBEAT=0
MPIRUN="$MPIRUN -x MUSTER_PROVIDER_PATH -x MUSTER_TIMEOUT -x MUSTER_MPI_HEARTBEAT"

# shellcheck source=tests/mpi/tap.sh
. tests/mpi/tap.sh

# solve LIMIT VAR=VALUE...: `muster solve potrs` on 2 ranks with those
# variables passed to the ranks; exit in $rc, wall seconds in $took
solve() {
  local limit=$1 xs="" v
  shift
  for v in "$@"; do xs="$xs -x ${v%%=*}"; done
  rm -f "$qlog"
  local t0
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  env "$@" TESTPROV_QLOG="$qlog" timeout -k 5 "$limit" $MPIRUN $xs -x TESTPROV_QLOG -np 2 "$MUSTER" solve \
    potrs --launcher mpi --n 64 >"$out" 2>"$err"
  rc=$?
  took=$(echo "$(date +%s.%N) - $t0" | bc)
  # a sanitizer's report (BUILD=build-address, build-thread) fails the case
  if grep -q 'Sanitizer' "$err"; then rc=99; fi
}
at_least() { [ "$(echo "$1 >= $2" | bc)" = 1 ]; }
# the call ran to its end, 2 s long, on every rank, and nothing was cancelled
ran_2s() {
  [ "$rc" != 99 ] && grep -Eq '^  time +[0-9.]+ s \(provider 2\.[0-9]+ s\)' "$out" && ! grep -Eq 'cancel|has not returned' "$err"
}
asked() { [ -f "$qlog" ] && wc -l <"$qlog" | tr -d ' ' || echo 0; }
# every rank's line names `why`
both_say() {
  grep -q "^muster solve: rank 1 of 2 .*$1" "$err" && grep -q "^muster solve: potrs f64 n=64 ranks=2 mode=mpi: .*$1" "$err"
}

solve 30 TESTPROV_EST=colltwo=0.5 TESTPROV_BLOCK_S=2
if ran_2s && [ "$(asked)" = 1 ]; then
  ok "long: a 2 s call under a 3 s deadline (1 + 4 x 0.5 estimated) runs to the end (${took%.*} s)"
else
  bad "long: exit $rc after $took s, estimate asked $(asked) times"
fi

why='provider colltwo has not returned after 3.0 s (1 s MUSTER_TIMEOUT + 4 x 0.5 s estimated by colltwo)'
solve 30 TESTPROV_EST=colltwo=0.5 TESTPROV_BLOCK=1
if [ "$rc" = 1 ] && at_least "$took" 3 && both_say "$why" && ! grep -q MPI_Abort "$err"; then
  ok "stuck: cancelled on every rank at the 3 s deadline, which says where it came from (${took%.*} s)"
else
  bad "stuck: exit $rc after $took s, want 1 after >= 3 s and: $why"
fi

solve 30 MUSTER_PROVIDER=colltwo TESTPROV_EST=colltwo=0.5 TESTPROV_BLOCK_S=2
if ran_2s && [ "$(asked)" = 1 ]; then
  ok "forced: MUSTER_PROVIDER=colltwo, its estimate asked once, the 2 s call runs to the end"
else
  bad "forced: exit $rc after $took s, estimate asked $(asked) times"
fi

# host memory: ndevices is the number of ranks (docs/choice.md)
printf '# routine dtype ndevices n nrhs seconds\npotrs f64 2 64 1 0.5\n' >"$tmp/prov/colltwo.cost"
solve 30 TESTPROV_BLOCK_S=2
if ran_2s; then
  ok "cost: a 2 s call under 1 + 4 x 0.5 s from colltwo's cost table runs to the end"
else
  bad "cost: exit $rc after $took s"
fi
why='has not returned after 3.0 s (1 s MUSTER_TIMEOUT + 4 x 0.5 s from the cost table of colltwo)'
solve 30 TESTPROV_BLOCK=1
if [ "$rc" = 1 ] && at_least "$took" 3 && both_say "$why"; then
  ok "cost: a stuck call names the cost table"
else
  bad "cost: exit $rc after $took s, want: $why"
fi
rm "$tmp/prov/colltwo.cost"

why='has not returned after 1.0 s (1 s MUSTER_TIMEOUT + 4 x 0.001 s estimated by colltwo)'
solve 30 TESTPROV_EST=colltwo=0.001 TESTPROV_BLOCK=1
if [ "$rc" = 1 ] && both_say "$why"; then
  ok "tiny: an estimate of 1 ms leaves the deadline at MUSTER_TIMEOUT (${took%.*} s)"
else
  bad "tiny: exit $rc after $took s, want: $why"
fi

why='has not returned after 1.0 s (MUSTER_TIMEOUT) in a collective call'
solve 30 TESTPROV_BLOCK=1
if [ "$rc" = 1 ] && both_say "$why"; then
  ok "none: no estimate, no table: MUSTER_TIMEOUT alone (${took%.*} s)"
else
  bad "none: exit $rc after $took s, want: $why"
fi

echo "deadline: $pass passed, $fail failed"
[ "$fail" = 0 ]
