#!/usr/bin/env bash
# tests/mpi/cli-multihost.sh [BUILD] - `muster solve --launcher mpi` across
# two "hosts" (tests/mpi/hosts.sh: two network namespaces joined by a veth
# pair, each with its own private /dev/shm and hostname; Open MPI over TCP
# only).  Needs root; run-mpi-tests.sh runs it.
#
# Passes when: mpirun's map puts 2 of the 4 ranks on each host; potrs,
# potri and syevd (f64, n 203, fresh seeds) each exit 0 with rank 0's
# result line for 4 ranks and "check ok"; and both private /dev/shm are
# empty after every job (nothing went through shared memory: the solve's
# bootstrap and the CLI's exchanges went over MPI); and a rank on hostB
# stopped mid-solve is named by the ranks on hostA (below).  Ends with
# "cli-multihost: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
MUSTER=$PWD/$BUILD/bin/muster
fail() { echo "cli-multihost: FAIL: $*"; echo "cli-multihost: 0 passed, 1 failed"; exit 1; }
[ -x "$MUSTER" ] || fail "no $MUSTER"
: "${MUSTER_PROVIDER_PATH:?}"
# shellcheck source=tests/mpi/hosts.sh
. tests/mpi/hosts.sh
pass=0
for routine in potrs potri syevd; do
  cmd="$HOSTS_MPIRUN --display-map -x MUSTER_PROVIDER_PATH=$MUSTER_PROVIDER_PATH \
    $MUSTER solve $routine --launcher mpi --n 203"
  timeout 120 "$WORK/host" hostA "$NSA" "$cmd" >"$WORK/job.log" 2>&1
  rc=$?
  sed 's/^/  | /' "$WORK/job.log"
  [ $rc = 0 ] || fail "$routine: the job exited $rc"
  grep -Eq "^$routine f64 n=203 nrhs=1 ranks=4 mode=mpi provider=scalapack " "$WORK/job.log" &&
    grep -q '^  check     ok$' "$WORK/job.log" || fail "$routine: no passing result line"
  for h in hostA "$NET.2"; do # mpirun names its own node by hostname, the other by address
    grep -Eq "Data for node: $h[[:space:]].*Num procs: 2$" "$WORK/job.log" ||
      fail "$routine: mpirun's map does not put 2 ranks on $h"
  done
  pass=$((pass + 1))
done

# A rank on hostB stopped mid-solve (MUSTER_TIMEOUT 2): hostA's ranks cannot
# see hostB's processes as a node can (another host, in a real job), so it
# is the heartbeat over MPI (TCP between the hosts here) that names it:
# each of rank 0 and 1 must report rank 2's pid on hostB, silent, and the
# job must end (MPI_Abort: mpirun exit 9) within 2 + 4 s of the stop.  The
# job's processes are told apart from any other on this machine by a
# variable only they have.
tag="multihost-stop-$$"
cmd="$HOSTS_MPIRUN -x MUSTER_PROVIDER_PATH=$MUSTER_PROVIDER_PATH -x MUSTER_TIMEOUT=2 -x MH_TAG=$tag \
  $MUSTER solve potrs --launcher mpi --n 1000 --reps 64 --warmup 100"
timeout 120 "$WORK/host" hostA "$NSA" "$cmd" >"$WORK/job.log" 2>&1 &
job=$!
victim=""
for _ in $(seq 600); do
  for p in $(pgrep -x muster); do
    env=$(tr '\0' '\n' 2>/dev/null <"/proc/$p/environ")
    grep -qx "MH_TAG=$tag" <<<"$env" && grep -qx OMPI_COMM_WORLD_RANK=2 <<<"$env" && victim=$p
  done
  [ -n "$victim" ] && break
  sleep 0.1
done
[ -n "$victim" ] || { sed 's/^/  | /' "$WORK/job.log"; fail "stop: rank 2 never started"; }
sleep 1.5
kill -STOP "$victim"
t0=$SECONDS
for _ in $(seq 120); do kill -0 "$job" 2>/dev/null || break; sleep 0.05; done
took=$((SECONDS - t0))
kill -KILL "$victim" 2>/dev/null
wait "$job"
rc=$?
sed 's/^/  | /' "$WORK/job.log"
[ "$rc" = 9 ] || fail "stop: the job exited $rc after rank 2 stopped, not 9 (MPI_Abort) within 6 s"
for r in 0 1; do
  grep -Eq "^muster: pid [0-9]+ on hostA: rank $r: .*rank 2 \(pid $victim on hostB\) has sent no heartbeat" \
    "$WORK/job.log" || fail "stop: rank $r (hostA) did not name rank 2 (pid $victim on hostB)"
done
echo "cli-multihost: rank 2 (pid $victim on hostB) stopped: named by both ranks on hostA, the job ended within $took s"
pass=$((pass + 1))
cat "$WORK/shm.log" | sed 's/^/  | /'
[ "$(grep -c ': /dev/shm after the job: \[\]$' "$WORK/shm.log")" = 8 ] ||
  fail "a host's private /dev/shm was used (or not reported)"
echo "cli-multihost: 3 solves across hostA and hostB over TCP, both /dev/shm empty after each"
echo "cli-multihost: $pass passed, 0 failed"
