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
# bootstrap and the CLI's exchanges went over MPI).  Ends with
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
cat "$WORK/shm.log" | sed 's/^/  | /'
[ "$(grep -c ': /dev/shm after the job: \[\]$' "$WORK/shm.log")" = 6 ] ||
  fail "a host's private /dev/shm was used (or not reported)"
echo "cli-multihost: 3 solves across hostA and hostB over TCP, both /dev/shm empty after each"
echo "cli-multihost: $pass passed, 0 failed"
