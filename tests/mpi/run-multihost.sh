#!/usr/bin/env bash
# tests/mpi/run-multihost.sh [BUILD] - two "hosts" on one machine, one MPI job
# across them, through the scalapack provider (issue 13's multi-host test).
# Needs root (ip netns, mounts); CI runs it from run-mpi-tests.sh.
#
# The hosts (tests/mpi/hosts.sh, shared with cli-multihost.sh): each is its own network namespace (hostA, hostB: a veth pair between
# them, 10.213.<pid-derived>.1 and .2/24), its own mount namespace with a
# private tmpfs on /dev/shm, and its own hostname (UTS namespace).  mpirun
# runs inside hostA and starts hostA's ranks itself; it reaches hostB
# through a launch agent (plm_rsh_agent, in place of ssh) that enters
# hostB's namespaces and runs the orted command there.  Open MPI is held to
# TCP over the veth subnet (pml ob1, btl tcp,self, oob and btl_tcp on the
# subnet only), so the only path between the hosts is the veth pair.
#
# Passes when: the solve across both hosts passes (every routine, f64,
# residuals and the lapack comparison, 2 ranks per host); the driver's
# "whoami" shows ranks with two distinct hostnames, network namespaces and
# /dev/shm filesystems; and both private /dev/shm are still empty after the
# job (nothing of it went through shared memory).  Ends with
# "multihost: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
DRV=$PWD/$BUILD/tests/mpi-scalapack
fail() { echo "multihost: FAIL: $*"; echo "multihost: 0 passed, 1 failed"; exit 1; }
[ -x "$DRV" ] || fail "no $DRV (build with MPI + ScaLAPACK installed)"
# shellcheck source=tests/mpi/hosts.sh
. tests/mpi/hosts.sh
mpirun_cmd="$HOSTS_MPIRUN $DRV whoami --n 37,100"
echo "multihost: $mpirun_cmd"
timeout 150 "$WORK/host" hostA "$NSA" "$mpirun_cmd" >"$WORK/job.log" 2>&1
rc=$?
sed 's/^/  | /' "$WORK/job.log"
cat "$WORK/shm.log" 2>/dev/null | sed 's/^/  | /'
[ $rc = 0 ] || fail "the job exited $rc"
grep -Eq '^mpi-scalapack np=4 whoami: [1-9][0-9]* passed, 0 failed' "$WORK/job.log" ||
  fail "the solve across the hosts did not pass"
who=$(grep '^whoami rank' "$WORK/job.log")
hosts=$(awk '{print $5}' <<<"$who" | sort -u | tr '\n' ' ')
nets=$(awk '{print $7}' <<<"$who" | sort -u | wc -l)
shms=$(awk '{print $9}' <<<"$who" | sort -u | wc -l)
[ "$hosts" = "hostA hostB " ] || fail "ranks ran on hosts [$hosts], want hostA and hostB"
[ "$nets" = 2 ] && [ "$shms" = 2 ] || fail "$nets network namespaces and $shms /dev/shm among the ranks, want 2 and 2"
[ "$(grep -c ': /dev/shm after the job: \[\]$' "$WORK/shm.log" 2>/dev/null)" = 2 ] ||
  fail "a host's private /dev/shm was used (or not reported)"
echo "multihost: ranks on hostA and hostB (2 network namespaces, 2 private /dev/shm, both empty after); the solve passed over TCP"
echo "multihost: 1 passed, 0 failed"
