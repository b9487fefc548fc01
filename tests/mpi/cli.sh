#!/usr/bin/env bash
# tests/mpi/cli.sh [BUILD] - `muster solve --launcher mpi|auto` under mpirun
# (run-mpi-tests.sh runs it; docs/testing.md#mpi-tests).  MPIRUN: mpirun
# and its options (run-mpi-tests.sh's, else a default); the providers are
# BUILD's lapack and scalapack.
#
#   solve       every routine x dtype scalapack lists (`muster providers`),
#               on 1..4 ranks, n = 157 (divisible by no grid or tile),
#               potrs, getrs and gels with 3 right-hand sides, gels with
#               m = n, n + 1, 2n and 200 rows on 1..4 ranks: exit 0, rank
#               0's result line (mode=mpi, ranks=NP, provider=scalapack,
#               gels's m=M), "check ok" with a fresh seed each time, and
#               nothing else on stdout
#   logdet      potrs --logdet on 1..4 ranks (when scalapack lists
#               potrs+logdet): the log det line within its tolerance
#   missing     a CLI routine scalapack does not list: exit 1, and the
#               runtime's reason on stderr from every rank, each named
#   usage       --ranks / --mode with --launcher, a bad --devices list: exit
#               2, its message, before MPI starts; --launcher auto without a
#               launcher: exit 2 naming the variables; a bad --launcher
#   auto        --launcher auto under mpirun picks mpi
#   example     docs/examples/mpi_solve on 2 and 4 ranks: rank 0's "ok" line
#   forced      --provider lapack (a leader provider) under mpi: exit 1, the
#               runtime's reason
#   deadline    a collective call that never returns (the test provider
#               blocked until cancelled), MUSTER_TIMEOUT 1: with the
#               heartbeat (every rank is alive) it is not cancelled (still
#               waiting after 4 s); without (MUSTER_MPI_HEARTBEAT=0) it is,
#               on every rank at the deadline, each names the reason, exit 1
#               within 10 s; MUSTER_MPI_ABORT=0: no deadline;
#               MUSTER_MPI_ABORT=yes, MUSTER_MPI_HEARTBEAT=yes: exit 2
#   gpu         GPU mode (a provider of CUDA memory only) on this GPU-less
#               machine: tests/mpi/cli-gpu.sh (its header says what)
# CLI_ROUTINES="potrs ..." limits the routines (default: every one the CLI has).
# Ends with "cli: P passed, F failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
MUSTER=$PWD/$BUILD/bin/muster
: "${MPIRUN:=mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -x OPENBLAS_NUM_THREADS=1}"
export OPENBLAS_NUM_THREADS=1
pass=0 fail=0
out=$(mktemp) err=$(mktemp)
# The build's provider folders with lapack and scalapack only (no GPU
# provider's CUDA libraries to load), each where the build put it: a
# routine's folder has scalapack when the provider implements it.
PROV=$(mktemp -d /tmp/muster-cli-prov.XXXXXX)
trap 'rm -rf "$out" "$err" "$PROV"' EXIT
for dir in "$PWD/$BUILD"/lib/muster/providers/*/; do
  r=$(basename "$dir")
  mkdir -p "$PROV/$r"
  for p in lapack scalapack; do [ -e "$dir/$p.so" ] && ln -s "$dir/$p.so" "$PROV/$r/$p.so"; done
done
export MUSTER_PROVIDER_PATH=$PROV
MPIRUN="$MPIRUN -x MUSTER_PROVIDER_PATH"

# shellcheck source=tests/mpi/tap.sh
. tests/mpi/tap.sh

# run LIMIT CMD...: the command's stdout in $out, stderr in $err, exit in $rc
run() {
  local limit=$1
  shift
  timeout -k 5 "$limit" "$@" >"$out" 2>"$err"
  rc=$?
}

# The routines scalapack runs, from the CLI's own provider listing.
listed=$("$MUSTER" providers | awk '$1 == "scalapack" {print $3}')
[ -n "$listed" ] || { echo "cli: scalapack is not in \`muster providers\`"; echo "cli: 0 passed, 1 failed"; exit 1; }
echo "# scalapack lists: $listed"

for routine in ${CLI_ROUTINES:-potrs potri syevd getrs gels}; do
  if ! grep -qw "$routine" <<<"${listed//,/ }"; then
    # shellcheck disable=SC2086
    run 60 $MPIRUN -np 2 "$MUSTER" solve "$routine" --launcher mpi --n 57
    if [ "$rc" = 1 ] && [ ! -s "$out" ] &&
      grep -q "^muster solve: rank 1 of 2 (pid [0-9]* on .*no usable provider for $routine" "$err" &&
      grep -q "^muster solve: $routine f64 n=57 ranks=2 mode=mpi: .*no usable provider for $routine" "$err"; then
      ok "missing $routine: exit 1, every rank names the reason"
    else
      bad "missing $routine: exit $rc"
    fi
    continue
  fi
  for dtype in f32 f64 c64 c128; do
    for np in 1 2 3 4; do
      # gels: A is m x 157, m = n, n + 1, 2n, 200 by rank count
      rows=() mtext=
      if [ "$routine" = gels ]; then
        m=$(cut -d' ' -f"$np" <<<"157 158 314 200")
        rows=(--m "$m") mtext=" m=$m"
      fi
      # shellcheck disable=SC2086
      run 60 $MPIRUN -np "$np" "$MUSTER" solve "$routine" --launcher mpi --n 157 "${rows[@]}" --nrhs 3 \
        --dtype "$dtype"
      line="^$routine $dtype$mtext n=157 nrhs=[13] ranks=$np mode=mpi provider=scalapack tile=[0-9]+ seed=[0-9]+$"
      if [ "$rc" = 0 ] && grep -Eq "$line" "$out" && grep -q '^  check     ok$' "$out" &&
        [ "$(wc -l <"$out")" = 5 ]; then
        ok "solve $routine $dtype np=$np: $(grep -o 'residual .*' "$out")"
      else
        bad "solve $routine $dtype np=$np: exit $rc"
      fi
    done
  done
done

# potrs --logdet: the log det next to the solve, checked on rank 0 against
# the reference Cholesky (--check=full; the default checks only O(n^2) bounds)
if grep -qw "potrs+logdet" <<<"${listed//,/ }"; then
  for np in 1 2 3 4; do
    dtype=$(cut -d' ' -f"$np" <<<"f32 f64 c64 c128")
    # shellcheck disable=SC2086
    run 60 $MPIRUN -np "$np" "$MUSTER" solve potrs --logdet --check=full --launcher mpi --n 157 --dtype "$dtype"
    if [ "$rc" = 0 ] && grep -Eq '^  logdet    [0-9.e+-]+ \(reference [0-9.e+-]+, tolerance [0-9.e+-]+\)$' "$out" &&
      grep -q '^  check     ok$' "$out" && [ "$(wc -l <"$out")" = 6 ]; then
      ok "logdet $dtype np=$np: $(grep -o 'logdet .*' "$out")"
    else
      bad "logdet $dtype np=$np: exit $rc"
    fi
  done
else
  bad "scalapack does not list potrs+logdet: $listed"
fi

# usage: each refused combination, exit 2 with its message, no MPI started
usage() {
  local want=$1
  shift
  run 20 "$MUSTER" solve potrs "$@"
  if [ "$rc" = 2 ] && grep -q -- "$want" "$err" && [ ! -s "$out" ]; then
    ok "usage $*: exit 2"
  else
    bad "usage $*: exit $rc, want 2 and /$want/"
  fi
}
usage "--ranks makes no sense with --launcher mpi" --launcher mpi --ranks 2
usage "--mode makes no sense with --launcher mpi" --mode processes --launcher mpi
usage "--mode makes no sense with --launcher auto" --launcher auto --mode threads
usage "--devices: '0,,1' has an empty entry" --launcher mpi --devices 0,,1
usage "--launcher mpi or auto, not 'srun'" --launcher srun
usage "option '--launcher' needs a value" --launcher
usage "--m is the row count of a non-square A" --launcher mpi --m 10
(
  unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS
  usage "no launcher in the environment (none of OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS)" \
    --launcher auto
  # a launcher's variables that do not hold up (rank not below size) are no launcher
  OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=2 usage "no launcher in the environment" --launcher auto
) | tee /tmp/cli-usage.$$
pass=$((pass + $(grep -c '^ok' /tmp/cli-usage.$$))) fail=$((fail + $(grep -c '^not ok' /tmp/cli-usage.$$)))
rm -f /tmp/cli-usage.$$

# auto under mpirun: the same as mpi
# shellcheck disable=SC2086
run 60 $MPIRUN -np 2 "$MUSTER" solve potrs --launcher auto --n 64 --seed 7
if [ "$rc" = 0 ] && grep -q '^potrs f64 n=64 nrhs=1 ranks=2 mode=mpi provider=scalapack .* seed=7$' "$out" &&
  grep -q '^  check     ok$' "$out"; then
  ok "auto under mpirun: mpi, 2 ranks, --seed kept"
else
  bad "auto under mpirun: exit $rc"
fi

# a leader provider forced under mpi: the runtime's reason, every rank
# shellcheck disable=SC2086
run 60 $MPIRUN -np 2 "$MUSTER" solve potrs --launcher mpi --n 64 --provider lapack
if [ "$rc" = 1 ] && grep -q 'muster_solve_comm runs collective providers only' "$err" &&
  grep -q '^muster solve: rank 1 of 2 ' "$err"; then
  ok "forced leader provider: exit 1 with the runtime's reason"
else
  bad "forced leader provider: exit $rc"
fi

# docs/examples/mpi_solve.c, the C API's version of the same
for np in 2 4; do
  # shellcheck disable=SC2086
  run 60 $MPIRUN -np "$np" "$PWD/$BUILD/examples/mpi_solve" 157
  if [ "$rc" = 0 ] && grep -Eq "^mpi_solve: potrs n=157 over $np ranks \(mpi\): provider scalapack, residual [0-9.]+: ok$" "$out" &&
    [ "$(wc -l <"$out")" = 1 ]; then
    ok "example mpi_solve np=$np"
  else
    bad "example mpi_solve np=$np: exit $rc"
  fi
done

# The deadline of a kind mpi call, alone: colltwo (the collective test
# provider) with TESTPROV_BLOCK=1 waits until cancelled, on every rank.
# With the heartbeat (the CLI initialises MPI: the default) every rank is
# alive and beating, so MUSTER_TIMEOUT 1 does not end the call: waiting on
# a live peer is work, however long (still waiting 4 s on; tests/mpi/stop.sh
# has the stopped peer).  Without it (MUSTER_MPI_HEARTBEAT=0), each rank's
# watchdog cancels the call at the deadline and every rank ends with the
# reason (no MPI_Abort: the call returned); with MUSTER_MPI_ABORT=0 there is
# no deadline either, and the job is still waiting 4 s on.
COLL=$PROV/coll
mkdir -p "$COLL/potrs"
ln -s "$PWD/$BUILD/tests/providers/testprov_coll2.so" "$COLL/potrs/colltwo.so"
# (TCP between the ranks: the limit kills mpirun, see below)
# shellcheck disable=SC2086
MUSTER_PROVIDER_PATH=$COLL TESTPROV_BLOCK=1 MUSTER_TIMEOUT=1 \
  run 4 $MPIRUN --mca btl self,tcp -x TESTPROV_BLOCK -x MUSTER_TIMEOUT -np 2 "$MUSTER" solve potrs --launcher mpi --n 64
if [ "$rc" = 124 ] && ! grep -q 'cancel' "$err"; then
  ok "heartbeat: a blocked provider on live ranks is not cancelled (still waiting after 4 s)"
else
  bad "heartbeat: exit $rc, want the limit's 124"
fi
t0=$SECONDS
# shellcheck disable=SC2086
MUSTER_PROVIDER_PATH=$COLL TESTPROV_BLOCK=1 MUSTER_TIMEOUT=1 MUSTER_MPI_HEARTBEAT=0 \
  run 30 $MPIRUN -x TESTPROV_BLOCK -x MUSTER_TIMEOUT -x MUSTER_MPI_HEARTBEAT -np 2 "$MUSTER" solve potrs \
  --launcher mpi --n 64
why='provider colltwo was cancelled: provider colltwo has not returned after 1.0 s (MUSTER_TIMEOUT)'
# the bound: MUSTER_TIMEOUT + mpirun's start and end (the deadline's own
# precision is cli-fault.sh's: a stopped rank, 2 s, every rank ends 2.1 s on)
if [ "$rc" = 1 ] && [ $((SECONDS - t0)) -le 10 ] && grep -q "^muster solve: rank 1 of 2 .*$why" "$err" &&
  grep -q "^muster solve: potrs f64 n=64 ranks=2 mode=mpi: .*$why" "$err" && ! grep -q MPI_Abort "$err"; then
  ok "deadline: a blocked provider cancelled on every rank after MUSTER_TIMEOUT ($((SECONDS - t0)) s)"
else
  bad "deadline: exit $rc after $((SECONDS - t0)) s"
fi
# The limit ends this job by killing mpirun, and Open MPI's shared-memory
# transport (vader) then leaves its segments in /dev/shm (Open MPI's, not
# muster's: mpirun removes them only at a job's normal end), so this run
# uses TCP between its ranks.
# shellcheck disable=SC2086
MUSTER_PROVIDER_PATH=$COLL TESTPROV_BLOCK=1 MUSTER_TIMEOUT=1 MUSTER_MPI_ABORT=0 \
  run 4 $MPIRUN --mca btl self,tcp -x TESTPROV_BLOCK -x MUSTER_TIMEOUT -x MUSTER_MPI_ABORT -np 2 "$MUSTER" \
  solve potrs --launcher mpi --n 64
if [ "$rc" = 124 ]; then
  ok "MUSTER_MPI_ABORT=0: no deadline (still waiting after 4 s)"
else
  bad "MUSTER_MPI_ABORT=0: exit $rc, want the limit's 124"
fi
for v in MUSTER_MPI_ABORT MUSTER_MPI_HEARTBEAT; do
  env "$v=yes" timeout -k 5 10 "$MUSTER" solve potrs --launcher mpi >"$out" 2>"$err"
  rc=$?
  if [ "$rc" = 2 ] && grep -q "$v: 'yes' is not 0 or 1" "$err"; then
    ok "$v=yes: exit 2"
  else
    bad "$v=yes: exit $rc"
  fi
done

# GPU mode: tests/mpi/cli-gpu.sh (sourced: it counts in pass and fail)
# shellcheck source=tests/mpi/cli-gpu.sh
. tests/mpi/cli-gpu.sh

echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
