#!/usr/bin/env bash
# tests/mpi/stop.sh PHASE NP [BUILD]
#
# A rank of `muster solve potrs --launcher mpi --provider scalapack` on NP
# ranks stopped (SIGSTOP) at PHASE, and what the others do: the runtime's
# watch of the kind mpi path (docs/bootstrap.md, "Liveness over MPI").
# run-mpi-tests.sh runs it inside `unshare -m -p -f --mount-proc`, as root:
# a private /dev/shm, and a PID namespace of its own (pgrep sees only the
# job; when the script exits the kernel ends whatever is left).
# MUSTER_TIMEOUT is 2 throughout.
#
#   init      rank 1 stops inside MPI_Init_thread (build/tests/libmpi-
#             stopshim.so as MUSTER_MPI_LIB raises SIGSTOP there): each
#             other rank's MPI_Init fails, naming rank 1's pid, host and the
#             phase, and the rank exits 1 by itself
#   finalize  the same inside MPI_Finalize, after a solve that passed
#   solve     rank 1 gets SIGSTOP from here while the ranks solve potrs
#             n 1500 again and again: each other rank reports that rank 1
#             (pid, host) has sent no heartbeat and what it was doing, and
#             the job ends by MPI_Abort (mpirun exit 9)
# init and finalize run mpirun with orte_abort_on_non_zero_status 0, so
# that no rank is killed by mpirun because another exited: each survivor's
# own exit status is checked (a wrapper writes it down).  Every survivor
# must end within MUSTER_TIMEOUT + 3 s of the stop and not before the
# timeout, the stopped rank must still be stopped then (it is killed here,
# after which mpirun must end within 5 s) and may say only that it was
# the one found silent (solve: when the launcher continues it to end it),
# nothing but this script may be
# left in the PID namespace, and the private /dev/shm must be empty.
#
#   healthy   no stop: MUSTER_TIMEOUT=1 and a syevd (n 2600) whose provider
#             call takes longer than that: it must run to its end, exit 0,
#             check ok (a long solve is work, not waiting on a peer)
#
# Environment: MPIRUN (mpirun and its options), MUSTER_PROVIDER_PATH.
set -u
phase=$1 np=$2 build=${3:-build}
cd "$(dirname "$0")/../.." || exit 2
muster=$PWD/$build/bin/muster
shim=$PWD/$build/tests/libmpi-stopshim.so
mount -t tmpfs -o size=512m,mode=1777 muster-stop /dev/shm ||
  { echo "stop: cannot mount a private /dev/shm (needs root and unshare -m)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log exits=$tmp/exits
host=$(hostname)
fail() { sed 's/^/  | /' "$log"; [ -s "$exits" ] && sed 's/^/  | exit: /' "$exits"; echo "stop $phase: FAIL: $*"; exit 1; }

# shellcheck source=tests/mpi/ending.sh
. tests/mpi/ending.sh

if [ "$phase" = healthy ]; then
  t0=$(now)
  # shellcheck disable=SC2086
  MUSTER_TIMEOUT=1 timeout -k 5 120 $MPIRUN -x MUSTER_TIMEOUT -np "$np" "$muster" solve syevd --launcher mpi \
    --provider scalapack --n 2600 >"$log" 2>&1
  rc=$?
  secs=$(grep -oE 'provider [0-9.]+ s' "$log" | grep -oE '[0-9.]+')
  sed 's/^/  | /' "$log"
  echo "stop healthy: exit $rc after $(since "$t0") s, the provider's call took ${secs:-?} s (MUSTER_TIMEOUT 1)"
  if [ "$rc" != 0 ] || ! grep -q '^  check     ok' "$log"; then
    fail "a healthy solve longer than MUSTER_TIMEOUT did not pass"
  fi
  awk -v s="${secs:-0}" 'BEGIN { exit !(s > 1.5) }' ||
    fail "the provider's call took ${secs:-?} s: not longer than MUSTER_TIMEOUT by enough to test it (raise n)"
  exit 0
fi

export MUSTER_TIMEOUT=2
case $phase in
  init | finalize)
    export MUSTER_MPI_LIB=$shim STOPSHIM_AT=$phase STOPSHIM_RANK=1
    opts="--mca orte_abort_on_non_zero_status 0 -x MUSTER_MPI_LIB -x STOPSHIM_AT -x STOPSHIM_RANK"
    args="--n 300" ;;
  solve)
    opts="" args="--n 1500 --reps 64 --warmup 50" ;;
  *) echo "stop: PHASE is init, finalize, solve or healthy"; exit 2 ;;
esac
# TCP between the ranks: a job ended by MPI_Abort or by killing its ranks
# leaves the shared-memory transport's (vader's) segments, Open MPI's own,
# in /dev/shm, which the part's check would count (run-mpi-tests.sh)
opts="$opts --mca btl self,tcp"
# each rank's exit status, written down by a wrapper that is not the rank
# shellcheck disable=SC2016 # expanded by the wrapper's shell
wrap='"$@" & p=$!; wait $p; rc=$?; echo "rank $OMPI_COMM_WORLD_RANK pid $p exit $rc" >>"$STATUS"; exit $rc'
# shellcheck disable=SC2086
STATUS=$exits $MPIRUN $opts -x MUSTER_TIMEOUT -x STATUS -np "$np" bash -c "$wrap" wrap \
  "$muster" solve potrs --launcher mpi --provider scalapack $args >"$log" 2>&1 &
mp=$!

rank_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p'; }
state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
t0=$(now)
while [ "$(pgrep -x muster | wc -l)" -lt "$np" ]; do
  if ! kill -0 "$mp" 2>/dev/null || past "$t0" 60; then fail "the ranks never started"; fi
  sleep 0.05
done
victim="" survivors=""
for p in $(pgrep -x muster); do
  if [ "$(rank_of "$p")" = 1 ]; then victim=$p; else survivors="$survivors $p"; fi
done
[ -n "$victim" ] || fail "no rank 1 among the ranks"
if [ "$phase" = solve ]; then
  sleep 1.5
  kill -STOP "$victim"
fi
while [ "$(state_of "$victim")" != T ]; do # init, finalize: the shim stops it
  if ! kill -0 "$mp" 2>/dev/null || past "$t0" 60; then fail "rank 1 (pid $victim) never stopped"; fi
  sleep 0.02
done
bound=$((MUSTER_TIMEOUT + 3))
# shellcheck disable=SC2086 # one pid a word
await_end "$bound" $survivors
[ "$status" = ok ] || fail "$status (the survivors, after rank 1 stopped)"
took_survivors=$took
vstate=$(state_of "$victim")
kill -KILL "$victim" 2>/dev/null
# mpirun ends once every rank has; but with orte_abort_on_non_zero_status 0
# Open MPI 4.1's never does when its ranks all ended before MPI_Init did
# (init): then it is told to (SIGTERM), as a user would
t1=$(now)
while ! ended "$mp" && ! past "$t1" 3; do sleep 0.05; done
[ "$phase" = init ] && ! ended "$mp" && kill -TERM "$mp"
await_end 5 "$mp"
[ "$status" = ok ] || fail "mpirun: $status after rank 1 was killed"
wait "$mp"
rc=$?
sleep 0.2 # let the last exits finish their unlinks
others=$(ps -e -o pid=,comm= | awk -v me=$$ '$1 != me && $1 != 1 && $2 != "ps" && $2 != "awk" && $2 != "bash"')
leftover=$(ls -A /dev/shm)
echo "stop $phase: rank 1 (pid $victim) stopped; the $((np - 1)) others ended after $took_survivors s" \
  "(MUSTER_TIMEOUT $MUSTER_TIMEOUT, bound $bound s); mpirun exit $rc"
# (solve: MPI_Abort has the launcher end every rank, the stopped one too)
[ "$vstate" = T ] || { [ "$phase" = solve ] && ended "$victim"; } ||
  fail "rank 1 was not stopped (state $vstate) when the others had ended"
awk -v t="$took_survivors" -v m="$MUSTER_TIMEOUT" 'BEGIN { exit !(t >= m - 0.2) }' ||
  fail "the survivors ended before MUSTER_TIMEOUT"
case $phase in
  init) where='waited in MPI_Init_thread' ;;
  finalize) where='waited in MPI_Finalize' ;;
  solve) where='has sent no heartbeat for [0-9.]+ s, more than MUSTER_TIMEOUT \(2 s\): it is stopped \(SIGSTOP or a debugger\); when last heard it was [a-z]' ;;
esac
for p in $survivors; do
  r=$(grep -E " pid $p exit " "$exits" | awk '{print $2}')
  [ "$phase" = solve ] && r=$(awk -v p="$p" '$1 == "muster:" && $3 == p {print $7; exit}' "$log" | tr -d :)
  [ -n "$r" ] || fail "no word from the survivor pid $p"
  # its own line: who it is, the stopped rank's pid and host, and the phase
  grep -Eq "^(muster solve: rank $r (of $np )?\(pid $p on $host\)|muster: pid $p on $host: rank $r:).*rank 1 \(pid $victim on $host\).*$where" "$log" ||
    fail "rank $r (pid $p) did not name rank 1 (pid $victim on $host) and the phase (/$where/)"
  if [ "$phase" != solve ]; then
    grep -q "^rank $r pid $p exit 1$" "$exits" || fail "rank $r (pid $p) did not exit 1 by itself"
  fi
done
[ "$phase" != solve ] || [ "$rc" = 9 ] || fail "mpirun exit $rc, not 9 (MPI_Abort with MUSTER_ETIMEDOUT's errorcode)"
# the stopped rank, continued by the launcher's kill (SIGCONT, SIGTERM), may
# say only that it was the one found silent, never blame another
! grep -E "^(muster solve: rank 1 |muster: pid $victim |muster scalapack: rank 1 )" "$log" |
  grep -v "found this rank (1, pid $victim on $host) silent" || fail "the stopped rank blamed another"
[ -z "$others" ] || fail "processes left: $others"
[ -z "$leftover" ] || fail "left in /dev/shm: $leftover"
sed 's/^/  | /' "$log"
echo "stop $phase: every survivor named rank 1 and the phase; no process left, /dev/shm empty"
exit 0
