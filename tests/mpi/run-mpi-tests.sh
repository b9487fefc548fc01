#!/usr/bin/env bash
# tests/mpi/run-mpi-tests.sh [BUILD] - the MPI bootstrap's and the scalapack
# provider's tests, as CI runs them (as root, on 2 cores; about 2.5 minutes
# there, ASan part included: docs/testing.md).  BUILD is the build folder
# (default build); the ASan part uses build-address when it has the driver.
# Inputs are fresh random matrices on every run (each log's "# seed S";
# mpi-scalapack --seed S repeats one).
#
#   comm np=1..4      the runtime's MPI bootstrap with the collective test
#                     provider (build/tests/mpi-comm-test)
#   solve np=1..4     every routine x dtype x n (37, 100, 257) x caller layout
#                     (block, 1-D cyclic), auto and explicit tiles, NO_FACTOR /
#                     NO_VECTORS: residuals and the lapack provider's answer;
#                     through muster_solve_comm ("comm ...") unless a case
#                     asks for a provider tile ("direct ...")
#   tiny np=3,4       n = 1, 2, 3, 5: ranks with no rows or columns
#   general np=1..4   getrs, gels (m = 2n+3), potrs with log det x dtype x n
#                     (37, 100, 257; 1, 2, 3, 5 on 3 and 4 ranks): residuals,
#                     lapack's answer, A untouched; singular getrs,
#                     rank-deficient gels, NaN: the same error everywhere
#   dist np=2,4       potrs, syevd f64 on 2-D block-cyclic pieces of every
#                     P x Q grid (a mesh's one block each, and 7 x 5 blocks)
#                     through muster_solve_comm_dist: residuals (V assembled
#                     from every rank's piece)
#   factors np=1,2,4  geqrf (thin, full), gesvd (values, thin), polar x dtype
#                     on a tall, a wide and a square A: chk_factors (check_qr.h),
#                     B and W the same on every rank; rank-deficient solved,
#                     NaN refused everywhere, gesvd's full vectors refused
#   errors np=1..4    not positive definite, NaN/Inf (A, B, result), ranks that
#                     disagree, bad pieces, bootstrap kinds, sub-communicators,
#                     release_comms, estimate, late cancels; some through
#                     muster_solve_comm; the engine choice
#   grids             MUSTER_SCALAPACK_GRID=4x1 and 1x4 on 4 ranks, 2x1 on 2
#   kill, stop        SIGKILL / SIGSTOP rank 1 of 3 mid-solve: every rank ends
#                     within the bound, the output says why, /dev/shm (private
#                     to the test) empty after (tests/mpi/fault.sh, in its own
#                     mount and PID namespaces: nothing outlives it)
#   valgrind          np=1 under memcheck: no error, no definite leak of ours
#   asan              errors and solve on 2 ranks with the ASan+UBSan build
#                     (not complex syevd: an OpenBLAS defect, below), when
#                     build-address has the driver (run-all.sh builds it)
#   multihost         two network + mount namespaces as two hosts, one job
#                     over TCP (tests/mpi/run-multihost.sh)
#   cli, cli-*        `muster solve --launcher mpi` and docs/examples/mpi_solve
#                     (tests/mpi/cli.sh, cli-fault.sh, cli-multihost.sh)
#   deadline          a kind mpi call's deadline without the heartbeat:
#                     MUSTER_TIMEOUT + 4 x the chosen provider's estimate
#                     (tests/mpi/deadline.sh)
#   stop-*            a rank of the CLI stopped inside MPI_Init, mid-solve,
#                     inside MPI_Finalize: the others end naming it; a long
#                     healthy solve is not ended (tests/mpi/stop.sh)
# Each mpirun has a time limit; ends with "N passed, N failed" (run-all.sh's
# count()) and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
export DRV=$PWD/$BUILD/tests/mpi-scalapack
LOG=${LOG:-$BUILD/test-logs/mpi}
mkdir -p "$LOG"
# --mca mpi_yield_when_idle 1: a waiting rank yields the CPU (Open MPI spins
# otherwise, and 4 spinning ranks on 2 cores turn every message into a
# scheduler time slice).  One OpenBLAS thread per rank, for the same reason.
export MPIRUN="mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -x OPENBLAS_NUM_THREADS=1"
export OPENBLAS_NUM_THREADS=1
# OpenBLAS's kernels: Haswell where 0.3.21 fell back to Prescott on an AVX2
# CPU (tools/ci/openblas-kernels.sh says why); the ranks get the choice.
# shellcheck source=tools/ci/openblas-kernels.sh
. tools/ci/openblas-kernels.sh
[ -z "${OPENBLAS_CORETYPE:-}" ] || MPIRUN="$MPIRUN -x OPENBLAS_CORETYPE"
# The provider path of the driver's runs: lapack and scalapack alone (the
# engine choice's reasons then name only them, and no GPU provider's CUDA
# libraries are loaded: slow under valgrind).  prov_dir BUILD prints it.
prov_dir() {
  local dir r p
  dir=$(mktemp -d /tmp/muster-mpi-prov.XXXXXX)
  for r in potrs potri syevd getrs gels geqrf gesvd polar; do
    mkdir -p "$dir/$r"
    for p in lapack scalapack; do ln -s "$PWD/$1/lib/muster/providers/$p.so" "$dir/$r/$p.so"; done
  done
  echo "$dir"
}
PROV=$(prov_dir "$BUILD")
trap 'rm -rf "$PROV" "${ASAN_PROV:-}"' EXIT
export MUSTER_PROVIDER_PATH=$PROV
MPIRUN="$MPIRUN -x MUSTER_PROVIDER_PATH"
pass=0
fail=0

if [ ! -x "$DRV" ]; then
  echo "no $DRV: build with MPI + ScaLAPACK (tools/ci/install-deps.sh installs them)"
  echo "0 passed, 1 failed"
  exit 1
fi

# Open MPI keeps a session folder per mpirun (ompi.<host>.<uid>/pid.<pid>)
# in TMPDIR and removes it when the job ends; a killed mpirun cannot.  So
# every part runs with a TMPDIR of its own: part_tmp makes it (path in
# PART_TMP), part_tmp_left prints what is left in it and removes it.
part_tmp() { PART_TMP=$(mktemp -d /tmp/muster-mpi-part.XXXXXX); }
part_tmp_left() {
  find "$PART_TMP" -mindepth 1 -maxdepth 3 2>/dev/null | sed "s|^$PART_TMP/||" | head -5
  rm -rf "$PART_TMP"
}

# driver NAME TIMEOUT ARGS...: one mpirun of the driver; adds its closing
# "P passed, F failed" (or one failure when there is none).  Nothing may be
# left in its TMPDIR (the job ended by itself).
driver() {
  local name=$1 limit=$2 log="$LOG/$1.log" line p f t0=$SECONDS left
  shift 2
  part_tmp
  # shellcheck disable=SC2086
  TMPDIR=$PART_TMP timeout -k 5 "$limit" "$@" >"$log" 2>&1
  local rc=$?
  left=$(part_tmp_left)
  if [ -n "$left" ]; then
    echo "left in TMPDIR (removed now): $(echo $left)" >>"$log"
    [ "$rc" != 0 ] || rc=1
  fi
  echo "=== $name ($((SECONDS - t0)) s)"
  grep -v '^ok ' "$log" | sed 's/^/  /'
  line=$(grep -E '^mpi-scalapack np=[0-9]+ [a-z]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
  pass=$((pass + ${p:-0}))
  fail=$((fail + ${f:-0}))
  if [ -z "$line" ] || [ -n "$left" ] || { [ "$rc" != 0 ] && [ "${f:-0}" = 0 ]; }; then
    fail=$((fail + 1))
    echo "  FAIL: $name exited $rc$([ -z "$line" ] && echo ' without its closing count')"
  fi
}

# Open MPI's shared-memory segments in this host's /dev/shm (a part that
# runs in a private /dev/shm cannot leave any here)
vader_segments() { find /dev/shm -maxdepth 1 -name 'vader_segment.*' 2>/dev/null | sort; }

# single NAME CMD...: a test that passes when CMD exits 0 and leaves no
# new Open MPI segment in /dev/shm, nor anything but Open MPI's session
# folder in its TMPDIR (some of these kill mpirun on purpose: that folder
# stays, and is noted).
single() {
  local name=$1 log="$LOG/$1.log" t0=$SECONDS before left ours
  shift
  before=$(vader_segments)
  part_tmp
  TMPDIR=$PART_TMP "$@" >"$log" 2>&1
  local rc=$?
  left=$(part_tmp_left)
  ours=$(grep -v '^ompi\.' <<<"$left" || true)
  if [ -n "$ours" ]; then
    echo "left in TMPDIR (removed now): $(echo $ours)" >>"$log"
    rc=1
  elif [ -n "$left" ]; then
    echo "Open MPI session folder left by a killed mpirun (removed now): $(echo $left | cut -d' ' -f1-2)" >>"$log"
  fi
  # a part must leave /dev/shm as it found it, Open MPI's files included (a
  # killed mpirun leaves its ranks' vader segments: such runs use TCP)
  left=$(vader_segments | grep -vxF -e "$before" || true) # -e: one pattern per line
  if [ -n "$left" ]; then
    echo "left in /dev/shm (removed now): $(echo $left)" >>"$log"
    # shellcheck disable=SC2086
    rm -f $left
    rc=1
  fi
  echo "=== $name ($((SECONDS - t0)) s)"
  sed 's/^/  /' "$log"
  if [ $rc = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "  FAIL: $name exited $rc"; fi
}

# comm NP: the MPI bootstrap alone (build/tests/mpi-comm-test, linked with
# libmuster only: the runtime dlopen()s libmpi) through the collective test
# provider, which checks the bootstrap's allgather and its piece's layout:
# every rank must say "rank R/NP ok".
comm() {
  local np=$1 dir
  dir=$(mktemp -d /tmp/muster-mpi.XXXXXX)
  mkdir -p "$dir/potrs"
  ln -s "$PWD/$BUILD/tests/providers/testprov_coll2.so" "$dir/potrs/colltwo.so"
  ln -s "$PWD/$BUILD/tests/providers/testprov_v1.so" "$dir/potrs/testprov.so"
  # shellcheck disable=SC2086
  single "comm-np$np" bash -c 'out=$(timeout -k 5 60 "$@" 2>&1); rc=$?; printf "%s\n" "$out"
    [ $rc = 0 ] && [ "$(printf "%s\n" "$out" | grep -c " ok (openmpi)")" = "$0" ]' \
    "$np" env MUSTER_PROVIDER_PATH="$dir" $MPIRUN -x MUSTER_PROVIDER_PATH -np "$np" \
    "$PWD/$BUILD/tests/mpi-comm-test"
  rm -rf "$dir"
}

t_start=$SECONDS
for np in 1 2 3 4; do comm "$np"; done
for np in 1 2 3 4; do
  # shellcheck disable=SC2086
  driver "solve-np$np" 300 $MPIRUN -np $np "$DRV" solve
done
for np in 3 4; do # matrices smaller than the grid: ranks holding nothing
  # shellcheck disable=SC2086
  driver "tiny-np$np" 120 $MPIRUN -np $np "$DRV" solve --n 1,2,3,5
done
for np in 1 2 3 4; do
  # shellcheck disable=SC2086
  driver "errors-np$np" 120 $MPIRUN -np $np "$DRV" errors
done
# getrs, gels, potrs log det (tests/mpi/general.c)
for np in 1 2 3 4; do
  # shellcheck disable=SC2086
  driver "general-np$np" 120 $MPIRUN -np $np "$DRV" general
done
# geqrf, gesvd, polar on tall, wide and square A (tests/mpi/factors.c)
for np in 1 2 4; do
  # shellcheck disable=SC2086
  driver "factors-np$np" 120 $MPIRUN -np $np "$DRV" factors
done
# 2-D pieces through muster_solve_comm_dist (tests/mpi/dist.c)
for np in 2 4; do
  # shellcheck disable=SC2086
  driver "dist-np$np" 120 $MPIRUN -np $np "$DRV" dist
done
for np in 3 4; do
  # shellcheck disable=SC2086
  driver "general-tiny-np$np" 120 $MPIRUN -np $np "$DRV" general --n 1,2,3,5
done
for g in 4x1 1x4; do
  # shellcheck disable=SC2086
  driver "grid-$g" 120 $MPIRUN -np 4 -x MUSTER_SCALAPACK_GRID=$g "$DRV" solve --n 37,100 --quick
done
# shellcheck disable=SC2086
driver "grid-2x1" 120 $MPIRUN -np 2 -x MUSTER_SCALAPACK_GRID=2x1 "$DRV" solve --n 100 --quick
# A killed rank: mpirun notices and ends the job by itself.  Its ranks talk
# over shared memory (vader), as cli-kill's do: over TCP a survivor writing
# to the dead rank's socket dies of SIGPIPE, and mpirun may name that rank
# ("rank 2 ... exited on signal 13") instead of the killed one (a CI run
# failed so).  The stop part uses TCP: ranks ended by MPI_Abort leave
# vader's segments in /dev/shm, Open MPI's own (a CI run's stop part left
# two), which the part's check would count; a stopped rank closes no socket.
single kill unshare -m -p -f --mount-proc tests/mpi/fault.sh KILL 3 10 \
  'exited on signal 9' --n 600 --seconds 120
# A stopped rank: the others' deadline (the runtime's part, played by the
# driver's watchdog) calls cancel(), which aborts the MPI job.
single stop env MPIRUN="$MPIRUN --mca btl self,tcp" unshare -m -p -f --mount-proc tests/mpi/fault.sh STOP 3 15 \
  'muster scalapack: rank [0-9]+ .*aborting the MPI job' --n 600 --seconds 120 --deadline 3
# valgrind: one rank.  Open MPI's own noise (what MPI_Init keeps, the
# loader's reads) is suppressed by its file and tests/mpi/valgrind-mpi.supp,
# which match nothing with a frame of ours below MPI.
VG="valgrind -q --num-callers=40 --error-exitcode=9 --leak-check=full --show-possibly-lost=no \
  --errors-for-leak-kinds=definite --suppressions=/usr/share/openmpi/openmpi-valgrind.supp \
  --suppressions=$PWD/tests/valgrind.supp --suppressions=$PWD/tests/mpi/valgrind-mpi.supp"
# shellcheck disable=SC2086
driver "valgrind-errors" 300 $MPIRUN -np 1 $VG "$DRV" errors
# shellcheck disable=SC2086
driver "valgrind-solve" 300 $MPIRUN -np 1 $VG "$DRV" solve --n 37,64 --quick
# shellcheck disable=SC2086
driver "valgrind-general" 300 $MPIRUN -np 1 $VG "$DRV" general --n 37 --dtypes f64,c64
# ASan+UBSan: LeakSanitizer with full stacks (Open MPI has no frame
# pointers), so tests/mpi/lsan-mpi.supp can tell Open MPI's leaks from ours.
ASAN_DRV=$PWD/${ASAN_BUILD:-build-address}/tests/mpi-scalapack
if [ -x "$ASAN_DRV" ]; then
  ASAN_PROV=$(prov_dir "${ASAN_BUILD:-build-address}")
  export MUSTER_PROVIDER_PATH=$ASAN_PROV
  ASAN="-x ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=1 \
    -x LSAN_OPTIONS=suppressions=$PWD/tests/mpi/lsan-mpi.supp:print_suppressions=0 \
    -x UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
  # shellcheck disable=SC2086
  driver "asan-errors-np2" 300 $MPIRUN $ASAN -np 2 "$ASAN_DRV" errors
  # Not complex syevd: pXhetrd's pXhemv calls OpenBLAS 0.3.21's c/zgemv_n
  # kernel, which reads 8/16 bytes past a PBLAS work vector (valgrind:
  # "0 bytes after a block alloc'd" by PB_Cmalloc; OpenBLAS issue #4013);
  # under ASan's allocator that read can cross into an unmapped page.
  # shellcheck disable=SC2086
  driver "asan-solve-np2" 300 $MPIRUN $ASAN -np 2 "$ASAN_DRV" solve --n 37,100 --routines potrs,potri
  # shellcheck disable=SC2086
  driver "asan-syevd-np2" 300 $MPIRUN $ASAN -np 2 "$ASAN_DRV" solve --n 37,100 --routines syevd \
    --dtypes f32,f64
  # shellcheck disable=SC2086
  driver "asan-general-np2" 300 $MPIRUN $ASAN -np 2 "$ASAN_DRV" general --n 37,100
  export MUSTER_PROVIDER_PATH=$PROV
else
  echo "=== asan: not run here: no $ASAN_DRV (scons san=address builds it)"
fi
single multihost timeout -k 5 180 tests/mpi/run-multihost.sh "$BUILD"

# `muster solve --launcher mpi` (tests/mpi/cli.sh, cli-fault.sh,
# cli-multihost.sh): the CLI on 1-4 ranks, its refusals, a stopped rank
# (MUSTER_TIMEOUT 2: the others abort the job), a killed rank and a killed or
# stopped mpirun (the ranks end within 2 s), and across the two hosts.
single cli timeout -k 5 240 tests/mpi/cli.sh "$BUILD"
# The kind mpi deadline extended by the chosen provider's expected time
# without the heartbeat (tests/mpi/deadline.sh: colltwo on 2 ranks, about 25 s).
single deadline timeout -k 5 120 tests/mpi/deadline.sh "$BUILD"
single cli-stop env MUSTER_TIMEOUT=2 unshare -m -p -f --mount-proc tests/mpi/cli-fault.sh STOP rank1 5 \
  'rank 1 \(pid [0-9]+ on [^)]+\) has sent no heartbeat for 2\.[0-9] s.*aborting the MPI job' "$BUILD"
# A rank stopped inside MPI_Init, mid-solve, inside MPI_Finalize: every
# other rank ends within MUSTER_TIMEOUT (2 s) + 3 s naming it (pid, host,
# phase); a healthy solve longer than MUSTER_TIMEOUT runs to its end
# (tests/mpi/stop.sh; about 25 s)
single stop-init unshare -m -p -f --mount-proc tests/mpi/stop.sh init 4 "$BUILD"
single stop-solve unshare -m -p -f --mount-proc tests/mpi/stop.sh solve 3 "$BUILD"
single stop-finalize unshare -m -p -f --mount-proc tests/mpi/stop.sh finalize 3 "$BUILD"
single stop-healthy unshare -m -p -f --mount-proc tests/mpi/stop.sh healthy 3 "$BUILD"
single cli-kill unshare -m -p -f --mount-proc tests/mpi/cli-fault.sh KILL rank1 2 'exited on signal 9' "$BUILD"
single cli-kill-mpirun unshare -m -p -f --mount-proc tests/mpi/cli-fault.sh KILL mpirun 2 '' "$BUILD"
single cli-stop-mpirun unshare -m -p -f --mount-proc tests/mpi/cli-fault.sh STOP mpirun 2 '' "$BUILD"
single cli-multihost timeout -k 5 180 tests/mpi/cli-multihost.sh "$BUILD"

echo
echo "mpi tests took $((SECONDS - t_start)) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
