#!/bin/sh
# The cusolvermp GPU tests (docs/gpu-testing.md), one command from a build
# folder copied to a machine with 1 or 2 GPUs, CUDA 13, the nvidia-nccl-cu13
# wheel in a Python environment (its NCCL is found there), and the
# cuSOLVERMp wheel carried in <build>/deps (no network needed):
#     <build>/tests/gpu/run-mp-tests.sh [N]     (N: matrix order, default 1001)
# 1. the provider's host-side unit tests (run-tests mp_);
# 2. the wheel <build>/deps/nvidia_cusolvermp_cu13-*.whl unpacked into a
#    temporary folder named by MUSTER_MP_LIBDIR (unless MUSTER_MP_LIBDIR is set);
# 3. `muster solve --provider cusolvermp`, which checks the residual
#    ("ok":true: under 64 n eps), on 1 rank (1x1 grid) for potrs (nrhs 3, in
#    panels), syevd and syevd --no-vectors x f32, f64, c64, c128; the
#    relayout path on one GPU (MUSTER_MP_COPY=1: gather/scatter kernels);
#    odd and small n; getrs x every dtype; gels (--m 2n, n + 1, n) x every
#    dtype; then, with 2 GPUs, every routine x dtype on 2 processes (1x2
#    grid, relayout over NCCL) and the 2x1 grid;
# 3b. gpu-test --provider cusolvermp (tests/gpu/gpu_mp.c): getrs and potrs
#    with log det on 1..4 processes (as many as GPUs), every dtype, residuals,
#    A kept, log det against the lapack provider, singular and NaN inputs;
#    gels (m = 2n, n + 1, n) x every dtype on 1..4 processes: the
#    normal-equations residual, A kept, rank-deficient and NaN inputs;
# 4. informational runs (printed, not counted): cusolverMpPotrs with all
#    right-hand sides at once (MUSTER_MP_POTRS_NRHS=all) and a non-blocking
#    NCCL communicator (MUSTER_MP_NCCL_BLOCKING=0), whose support in
#    cuSOLVERMp 0.8 is unknown;
# 5. nothing of the job left in /dev/shm.
# Prints one line per run and "N passed, M failed"; exits 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../.." && pwd)
muster="$build/bin/muster"
n=${1:-1001}
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers"
export NCCL_NVLS_ENABLE=0
export MUSTER_JOB="mpgpu$$"
unset MUSTER_PROVIDER
seed=${MP_GPU_SEED:-$(date +%s)}
pass=0
fail=0
t_start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')

echo "# host-side unit tests"
if "$build/tests/run-tests" mp_; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: run-tests mp_"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${MUSTER_MP_LIBDIR:-}" ]; then
  whl=$(ls "$build"/deps/nvidia_cusolvermp_cu13-*.whl 2>/dev/null | head -1)
  if [ -n "$whl" ]; then
    python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$whl" "$tmp/site"
    export MUSTER_MP_LIBDIR="$tmp/site/nvidia/cu13/lib"
    # its metadata folder tells the provider the version before CUDA starts
    export PYTHONPATH="$tmp/site${PYTHONPATH:+:$PYTHONPATH}"
    echo "# cuSOLVERMp from $(basename "$whl")"
  else
    echo "# no wheel in $build/deps: cuSOLVERMp must be installed where the provider looks"
  fi
fi
"$muster" providers 2>&1 | grep -i -A2 cusolvermp

field() { # field NAME JSON: the raw value of "NAME": (string quotes dropped)
  printf '%s' "$2" | sed -n "s/.*\"$1\":\(\"[^\"]*\"\|\[[^]]*\]\|[^,}]*\).*/\1/p" | tr -d '"[]'
}

# run COUNTED ENV ROUTINE DTYPE RANKS N [options]: ENV is "-" or NAME=value
run() {
  counted=$1 envset=$2 routine=$3 dtype=$4 ranks=$5 nn=$6
  shift 6
  err=$(mktemp)
  if [ "$envset" = - ]; then
    out=$(timeout 180 "$muster" solve "$routine" --n "$nn" --dtype "$dtype" --mode processes --ranks "$ranks" \
          --provider cusolvermp --seed "$seed" --json "$@" 2>"$err")
  else
    out=$(env "$envset" timeout 180 "$muster" solve "$routine" --n "$nn" --dtype "$dtype" --mode processes \
          --ranks "$ranks" --provider cusolvermp --seed "$seed" --json "$@" 2>"$err")
  fi
  rc=$?
  prov=$(field provider "$out") res=$(field residual "$out") secs=$(field seconds "$out") ok=$(field ok "$out")
  why=""
  [ "$rc" = 0 ] || why="exit $rc"
  [ "$prov" = cusolvermp ] || why="$why provider '$prov'"
  [ "$ok" = true ] || why="$why ok '$ok'"
  if [ -z "$why" ]; then result=ok; else result="FAILED:$why"; fi
  if [ "$counted" = 1 ]; then
    if [ -z "$why" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  else
    result="(info) $result"
  fi
  printf '%-6s %-5s %-5s %-6s %-28s %-10s %-9s %s %s\n' "$routine" "$dtype" "$ranks" "$nn" "$envset" "$res" "$secs" \
    "$result" "$*"
  if [ -n "$why" ]; then
    [ -n "$out" ] && echo "    stdout: $(printf '%s' "$out" | cut -c1-400)"
    sed 's/^/    stderr: /' "$err" | head -8
  fi
  rm -f "$err"
}

echo "# n=$n seed=$seed (MP_GPU_SEED=$seed to replay); GPUs: $ngpu"
printf '%-6s %-5s %-5s %-6s %-28s %-10s %-9s %s\n' routine dtype ranks n env residual seconds result
for dtype in f32 f64 c64 c128; do
  run 1 - potrs "$dtype" 1 "$n" --nrhs 3
  run 1 - syevd "$dtype" 1 "$n"
  run 1 - syevd "$dtype" 1 "$n" --no-vectors
  run 1 - getrs "$dtype" 1 "$n" --nrhs 2
  run 1 - gels "$dtype" 1 "$n" --nrhs 2 --m $((2 * n))
done
run 1 - gels f64 1 "$n" --nrhs 3 --m $((n + 1))
run 1 - gels c128 1 "$n" --nrhs 1 --m "$n"
run 1 MUSTER_MP_COPY=1 getrs c128 1 "$n" --nrhs 1
run 1 MUSTER_MP_COPY=1 potrs f64 1 "$n" --nrhs 2
run 1 MUSTER_MP_COPY=1 syevd c128 1 "$n"
run 1 MUSTER_MP_COPY=1 potrs c64 1 "$n" --nrhs 1
run 1 - potrs f64 1 64 --nrhs 1
run 1 - syevd f32 1 100
run 1 MUSTER_MP_TILE=128 potrs f64 1 3000 --nrhs 4
run 1 MUSTER_MP_TILE=256 syevd f64 1 3000
run 0 MUSTER_MP_POTRS_NRHS=all potrs f64 1 "$n" --nrhs 5
run 0 MUSTER_MP_NCCL_BLOCKING=0 potrs f64 1 "$n" --nrhs 1
if [ "$ngpu" -ge 2 ]; then
  for dtype in f32 f64 c64 c128; do
    run 1 - potrs "$dtype" 2 "$n" --nrhs 3
    run 1 - syevd "$dtype" 2 "$n"
    run 1 - getrs "$dtype" 2 "$n" --nrhs 3
    run 1 - gels "$dtype" 2 "$n" --nrhs 3 --m $((2 * n))
  done
  run 1 MUSTER_MP_GRID=2x1 gels f64 2 "$n" --nrhs 2 --m $((n + 1))
  run 1 - gels c64 2 "$n" --nrhs 2 --m "$n"
  run 1 MUSTER_MP_GRID=2x1 getrs f64 2 "$n" --nrhs 2
  run 1 - syevd f64 2 "$n" --no-vectors
  run 1 MUSTER_MP_GRID=2x1 potrs f64 2 "$n" --nrhs 2
  run 1 MUSTER_MP_GRID=2x1 syevd c64 2 "$n"
  run 1 MUSTER_MP_SCRATCH_MB=1 potrs c128 2 "$n" --nrhs 1
else
  echo "# 1 GPU: the 2-process cases (1x2 and 2x1 grids, relayout over NCCL) are not run"
fi

echo "# gpu-test --provider cusolvermp (getrs, potrs log det, gels; $ngpu GPU(s))"
if "$here/gpu-test" --provider cusolvermp --max-gpus "${ngpu:-1}"; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAILED: gpu-test --provider cusolvermp"; fi

left=$(ls -A /dev/shm | awk -F. -v u="$(id -u)" -v j="$MUSTER_JOB" \
  '$1 == "muster" && $2 == u && $3 ~ /^[0-9]+$/ && $4 == j' | wc -l)
if [ "$left" != 0 ]; then
  echo "FAILED: $left segment(s) of job $MUSTER_JOB left in /dev/shm"
  fail=$((fail + 1))
fi
echo "# $(( $(date +%s) - t_start )) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
