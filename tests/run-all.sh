#!/usr/bin/env bash
# tests/run-all.sh - every test of muster on a CPU machine, as CI runs it.
#
#   bash tests/run-all.sh            install what is missing, build, run all
#   QUICK=1 bash tests/run-all.sh    skip the sanitizer and valgrind passes
#
# Stages: (1) dependencies (tools/ci/install-deps.sh --python); (2) the
# default build; (3) the C suite (build/tests/run-tests: every test in its own
# process with a time limit), then the build folder's bin, lib and tests
# copied elsewhere run their data-reading tests without the source tree
# (tests/check-build-travels.sh, under strace), and gpu-test's --part and
# --smoke select what they say (tests/gpu/check-parts.sh, no GPU); (4) the
# same suite under ASan+UBSan and (5) under TSan; (6) valgrind memcheck on
# the single-process tests (started in the background, nice 19, right after
# the build: it runs while (3)-(5) leave the CPU idle; its log is shown
# here); (7) the Python tests (pytest: JAX on 4 host
# devices, TensorFlow on logical CPU devices, tools/plot_gpu_bench.py on its
# fixture); (8) the PyTorch adapter's tests
# (tools/ci/install-torch.sh makes build/venv-torch with PyPI's torch, in
# the background, nice 19, from the build on; docs/torch.md says what that
# costs); (9) the wheels: built from the
# checkout, pip-installed into a fresh venv and run from elsewhere
# (tests/wheels/run.sh); (10) the README's main job; (11) the
# scalapack provider under MPI (tests/mpi/run-mpi-tests.sh: mpirun -np 1..4,
# faults, two namespaced "hosts"; needs root; stage 1 installs MPI +
# ScaLAPACK, so a build without the driver fails this stage); (12) nothing
# left in /dev/shm, nor in /tmp under our names.  Ends with one line
# "total: N passed, N failed"; exits non-zero if any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${JOBS:-2}
LOG=${LOG:-build/test-logs}
failed_stages=()
total_pass=0
total_fail=0

stage() { echo; echo "=== $* (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }
count() {  # add the counts of a log's closing "N passed, N failed" line
  local line p f
  line=$(grep -E '^([a-z]+: )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0}))
  if [ -z "$line" ]; then total_fail=$((total_fail + 1)); echo "no closing count line in $1"; fi
}
count_pytest() {
  local line p f
  # "192 passed, 1 error in 37.41s", with or without -v's "=" framing
  line=$(grep -E '[0-9]+ (passed|failed|errors?)(,.*)? in [0-9.]+s' "$1" | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
  f=$(grep -oE '[0-9]+ (failed|errors?)' <<<"$line" | awk '{s+=$1} END {print s+0}')
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0}))
}
run_stage() {  # run_stage NAME LOGFILE CMD... : tee to log, record failure
  local name=$1 log=$2; shift 2
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" != 0 ]; then failed_stages+=("$name (exit $rc)"); fi
  return 0
}
# Two stages run in the background, at nice 19, while the C suites run in
# the foreground: the torch install (network, then unpacking) and valgrind
# (one core: valgrind runs one thread at a time, each test one process).
# The C suites leave much of the 2 cores idle (tests waiting on timeouts,
# sleeps, killed peers, barriers); at nice 19 the background takes only
# that, and yields at once when a foreground test wants the CPU.  Each
# shows its log when waited for; its exit code counts as a stage's.
bg_start() {  # bg_start KEY LOGFILE CMD...: run CMD in the background
  local key=$1 log=$2; shift 2
  rm -f "$log.rc"
  ( t=$SECONDS; nice -n 19 "$@" >"$log" 2>&1; rc=$?; echo "$rc $((SECONDS - t))" >"$log.rc" ) &
  printf -v "bg_pid_$key" %s $!
}
bg_wait() {  # bg_wait KEY NAME LOGFILE: wait for KEY, show its log, record a failure
  local pid="bg_pid_$1" name=$2 log=$3 t=$SECONDS rc s
  [ -n "${!pid:-}" ] || return 0
  wait "${!pid}"
  cat "$log"
  read -r rc s <"$log.rc" 2>/dev/null || { rc=99; s=?; }
  echo "($name ran in the background for $s s; waited $((SECONDS - t)) s for it here)"
  if [ "$rc" != 0 ]; then failed_stages+=("$name (exit $rc)"); fi
  printf -v "bg_pid_$1" %s ""
}
# a run-all.sh that ends early stops them (and what they started) too
trap 'for p in ${bg_pid_torch:-} ${bg_pid_valgrind:-}; do pkill -TERM -P "$p"; kill "$p"; done 2>/dev/null' EXIT

stage "dependencies"
bash tools/ci/install-deps.sh --python || { echo "dependency install failed"; exit 1; }
export PATH="$ROOT/build/venv/bin:$PATH"
# OpenBLAS's Haswell kernels where 0.3.21 falls back to Prescott on an AVX2
# CPU (CI's VMs): those give NaNs now and then (the script says where)
# shellcheck source=tools/ci/openblas-kernels.sh
. tools/ci/openblas-kernels.sh
mkdir -p "$LOG"

stage "build"
scons -Q -j"$JOBS" || { echo "build failed"; exit 1; }

# What /dev/shm and /tmp hold before the tests: stage (12) compares.
shm_before=$(ls -A /dev/shm 2>/dev/null | sort)
tmp_before=$(ls -A /tmp 2>/dev/null | sort)

# torch's venv (its own: PyPI's torch is 5 GB installed, docs/torch.md), kept
# apart from the JAX/TensorFlow one; waited for at the PyTorch stage
bg_start torch "$LOG/torch-install.log" bash tools/ci/install-torch.sh build/venv-torch
if [ -z "${QUICK:-}" ]; then  # valgrind memcheck: waited for before the Python stage
  VG_TESTS=$(build/tests/run-tests --list | grep -E "${VALGRIND_TESTS:-^(error|segment|layout|dtype|registry|lapack_provider)}" | tr '\n' ' ')
  if [ -n "$VG_TESTS" ]; then
    bg_start valgrind "$LOG/valgrind.log" env MUSTER_TEST_SCALE=20 MUSTER_TEST_NO_TIMING=1 \
      valgrind -q --error-exitcode=9 --leak-check=full --show-possibly-lost=no --errors-for-leak-kinds=definite \
      --suppressions="$ROOT/tests/valgrind.supp" build/tests/run-tests $VG_TESTS
  fi
fi

stage "C suite"
run_stage "C suite" "$LOG/c.log" build/tests/run-tests
count "$LOG/c.log"

stage "build folder travels"
run_stage "build travels" "$LOG/travels.log" bash tests/check-build-travels.sh build
count "$LOG/travels.log"

stage "GPU test selection (gpu-test --list: parts, smoke)"
run_stage "GPU selection" "$LOG/gpu-select.log" bash tests/gpu/check-parts.sh build
count "$LOG/gpu-select.log"

if [ -z "${QUICK:-}" ]; then
  stage "C suite under ASan+UBSan"
  if scons -Q -j"$JOBS" san=address >"$LOG/build-asan.log" 2>&1; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      MUSTER_TEST_SCALE=4 run_stage "ASan" "$LOG/asan.log" build-address/tests/run-tests
    count "$LOG/asan.log"
  else
    cat "$LOG/build-asan.log"; failed_stages+=("ASan build")
  fi

  stage "C suite under TSan"
  if scons -Q -j"$JOBS" san=thread >"$LOG/build-tsan.log" 2>&1; then
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$ROOT/tests/tsan.supp" \
      MUSTER_TEST_SCALE=6 run_stage "TSan" "$LOG/tsan.log" build-thread/tests/run-tests ${TSAN_TESTS:-}
    count "$LOG/tsan.log"
  else
    cat "$LOG/build-tsan.log"; failed_stages+=("TSan build")
  fi

  if [ -n "${VG_TESTS:-}" ]; then
    stage "valgrind memcheck (in the background since the C suite)"
    bg_wait valgrind "valgrind" "$LOG/valgrind.log"
    count "$LOG/valgrind.log"
  fi
fi

stage "Python adapters"
export MUSTER_BUILD="$ROOT/build"
pyt=()
[ -d tests/python/jax ] && pyt+=(tests/python/jax)
[ -d tests/python/tf ] && pyt+=(tests/python/tf)
[ -d tests/python/tools ] && pyt+=(tests/python/tools)
if [ ${#pyt[@]} -gt 0 ]; then
  XLA_FLAGS=--xla_force_host_platform_device_count=4 MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-30} \
    run_stage "pytest" "$LOG/pytest.log" python -m pytest -q -p no:cacheprovider --timeout=600 --durations=20 "${pyt[@]}"
  # pytest exits 5 when it collected nothing: that is a failure here.
  count_pytest "$LOG/pytest.log"
fi

stage "PyTorch adapter"
# the install ran in the background since the build (bg_start above); its
# time there is "torch install: N s", what it still cost here "waited"
t0=$SECONDS
bg_wait torch "torch install" "$LOG/torch-install.log"
echo "torch install: $(cut -d' ' -f2 "$LOG/torch-install.log.rc" 2>/dev/null) s"
if [ -x build/venv-torch/bin/python ]; then
  MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-30} run_stage "pytest torch" "$LOG/pytest-torch.log" \
    build/venv-torch/bin/python -m pytest -q -p no:cacheprovider --timeout=600 --durations=10 tests/python/torch
  count_pytest "$LOG/pytest-torch.log"
fi
echo "PyTorch stage: $((SECONDS - t0)) s"

stage "wheels (pip install from dist/, docs/install.md)"
# tools/wheels/build.sh, then a fresh venv with no build tree and no MUSTER_*
# variables: muster solve, muster_jax on 4 host devices, muster_torch in
# build/venv-torch's python (tests/wheels/run.sh says what and why)
t0=$SECONDS
run_stage "wheels" "$LOG/wheels.log" env LOG="$LOG" bash tests/wheels/run.sh
count "$LOG/wheels.log"
echo "wheels stage: $((SECONDS - t0)) s"

stage "main job (README quick start)"
run_stage "main job" "$LOG/main.log" build/bin/muster solve potrs --n 1024 --ranks 2 --mode threads --dtype f64
grep -q '"ok": *true\|check: ok\|ok' "$LOG/main.log" || failed_stages+=("main job output")

stage "scalapack provider under MPI"
run_stage "MPI" "$LOG/mpi.log" bash tests/mpi/run-mpi-tests.sh build
count "$LOG/mpi.log"

# Every test removes what it made (the C runner checks each test's segments
# and TMPDIR, the pytest fixtures each test's segments, the MPI parts their
# segments and TMPDIR); this is the net under all of them.  Anything new in
# /dev/shm fails, and so does a new /tmp entry with a name of ours or of
# the engines we start (Open MPI's session folders, valgrind's vgdb pipes,
# torchrun's logs).
stage "leftovers in /dev/shm and /tmp"
new_entries() { comm -13 <(printf '%s\n' "$1") <(ls -A "$2" 2>/dev/null | sort); }
left_shm=$(new_entries "$shm_before" /dev/shm)
left_tmp=$(new_entries "$tmp_before" /tmp | grep -E '^(muster|mp_provider_|torchelastic_|ompi\.|vgdb-pipe)' || true)
if [ -n "$left_shm$left_tmp" ]; then
  [ -z "$left_shm" ] || echo "left in /dev/shm: $(echo $left_shm)"
  [ -z "$left_tmp" ] || echo "left in /tmp: $(echo $left_tmp)"
  failed_stages+=("leftovers"); total_fail=$((total_fail + 1))
else
  echo "none"; total_pass=$((total_pass + 1))
fi

echo
if [ ${#failed_stages[@]} -gt 0 ]; then
  echo "failed stages: ${failed_stages[*]}"
fi
echo "total: $total_pass passed, $total_fail failed"
[ ${#failed_stages[@]} -eq 0 ] && [ "$total_fail" = 0 ]
