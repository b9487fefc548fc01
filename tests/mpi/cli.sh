#!/usr/bin/env bash
# tests/mpi/cli.sh [BUILD] - `muster solve --launcher mpi|auto` under mpirun
# (run-mpi-tests.sh runs it; docs/testing.md#mpi-tests).  Needs MPIRUN
# (mpirun and its options) and MUSTER_PROVIDER_PATH (lapack and scalapack)
# from the caller, as run-mpi-tests.sh exports them.
#
#   solve       every routine x dtype scalapack lists (`muster providers`),
#               on 1..4 ranks, n = 157 (divisible by no grid or tile),
#               potrs with 3 right-hand sides: exit 0, rank 0's result line
#               (mode=mpi, ranks=NP, provider=scalapack), "check ok" with
#               a fresh seed each time, and nothing else on stdout
#   missing     a CLI routine scalapack does not list: exit 1, and the
#               provider's reason on stderr from every rank, each named
#   usage       --ranks / --mode / --devices with --launcher: exit 2, its
#               message, before MPI starts; --launcher auto without a
#               launcher: exit 2 naming the variables; a bad --launcher
#   auto        --launcher auto under mpirun picks mpi
#   forced      --provider lapack (a leader provider) under mpi: exit 1, the
#               runtime's reason
# Ends with "cli: P passed, F failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
MUSTER=$PWD/$BUILD/bin/muster
: "${MPIRUN:?}" "${MUSTER_PROVIDER_PATH:?}"
pass=0 fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() {
  fail=$((fail + 1))
  echo "not ok - $*"
  sed 's/^/  | out: /' "$out"
  sed 's/^/  | err: /' "$err"
}

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

for routine in potrs potri syevd getrs; do
  if ! grep -qw "$routine" <<<"${listed//,/ }"; then
    # shellcheck disable=SC2086
    run 60 $MPIRUN -np 2 "$MUSTER" solve "$routine" --launcher mpi --n 57
    if [ "$rc" = 1 ] && [ ! -s "$out" ] && grep -q "^muster solve: rank 1 of 2 (pid [0-9]* on .*no usable provider" "$err" &&
      grep -q "scalapack.*does not implement the routine" "$err"; then
      ok "missing $routine: exit 1, every rank names the reason"
    else
      bad "missing $routine: exit $rc"
    fi
    continue
  fi
  for dtype in f32 f64 c64 c128; do
    for np in 1 2 3 4; do
      # shellcheck disable=SC2086
      run 60 $MPIRUN -np "$np" "$MUSTER" solve "$routine" --launcher mpi --n 157 --nrhs 3 --dtype "$dtype"
      line="^$routine $dtype n=157 nrhs=[13] ranks=$np mode=mpi provider=scalapack tile=[0-9]+ seed=[0-9]+$"
      if [ "$rc" = 0 ] && grep -Eq "$line" "$out" && grep -q '^  check     ok$' "$out" &&
        [ "$(wc -l <"$out")" = 5 ]; then
        ok "solve $routine $dtype np=$np: $(grep -o 'residual .*' "$out")"
      else
        bad "solve $routine $dtype np=$np: exit $rc"
      fi
    done
  done
done

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
usage "--devices makes no sense with --launcher mpi" --launcher mpi --devices 0
usage "--launcher mpi or auto, not 'srun'" --launcher srun
usage "--launcher needs a value" --launcher
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

echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
