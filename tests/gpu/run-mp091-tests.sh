#!/bin/sh
# cuSOLVERMp 0.9.1 on the GPU machine (docs/gpu-scripts.md "cuSOLVERMp
# 0.9.1"), one command from a build folder copied there with
# <build>/deps091/mp091.tar.xz (make-mp091-deps.sh: cuSOLVERMp 0.9.1,
# cuBLASMp 0.10 and an NCCL >= 2.29 built for sm_90; the machine's own NCCL
# 2.28.9 lacks ncclCommQueryProperties, which 0.9.1 calls on every grid):
#     <build>/tests/gpu/run-mp091-tests.sh [--max-gpus R]
# Carry build/bin, build/lib, build/tests/gpu and build/deps091 (not the
# 0.8 wheel in build/deps nor the rest of build/tests: the archive is
# 26.4 MiB, all four 34.4 MiB, docs/gpu-scripts.md).  Steps, each under
# `timeout -k 5`:
# 1. unpack the archive into a temporary folder named by MUSTER_MP_LIBDIR
#    (its NCCL first, so it is the one loaded);
# 2. `muster providers` must report cusolvermp on cuSOLVERMp 0.9.1 with an
#    NCCL >= 2.29 (else every later run would measure 0.8 or nothing);
# 3. `muster solve --provider cusolvermp` with its residual check: potrs,
#    syevd, syevd --no-vectors, getrs, gels x f64 and c64 on 1 rank; then
#    on 2 processes potrs, syevd, getrs x f64, c128 and gels refused (0.9's
#    QR is not known right on grids either: version.c); syevd f64 n = 8192
#    on 1 rank and on every GPU (the large-n eigenvectors 0.9.1 fixed);
#    with 4 GPUs potrs, syevd c128 and getrs on 4 processes;
#    gesvd and polar (0.9's cusolverMpGesvd / cusolverMpPolar, svd.c) with
#    the CLI's checks (||A - U S V^H||, U's and V's orthogonality, the
#    values against the factors; ||A - U_p H||, U_p's orthogonality, H
#    Hermitian PSD): n = 600, square, tall (m = 1200) and wide (m = 300),
#    thin, --full and --no-vectors, f64 and c64, on 1, 2 and 4 processes;
#    polar of a wide A refused (cuSOLVERMp's Polar takes m >= n);
# 4. nothing of the job left in /dev/shm.
# Prints one line per run, the seconds and "N passed, M failed"; exits 1 on
# any failure.  About 3 to 4 minutes on 4 x H200 (each run starts its
# processes, CUDA and NCCL: 3 to 10 s; the 20 gesvd / polar runs add about
# 80 s).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
parts_from_args "$@"
export MUSTER_JOB="mp091$$"
unset MUSTER_PROVIDER
seed=${MP_GPU_SEED:-$(date +%s)}
t_start=$(date +%s)
gpu_info
ngpu=$(gpu_count)
[ -n "$max_gpus" ] && [ "$max_gpus" -lt "$ngpu" ] && ngpu=$max_gpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arch=$build/deps091/mp091.tar.xz
if ! timeout -k 5 60 tar -xJf "$arch" -C "$tmp"; then
  echo "FAILED: cannot unpack $arch (made by tests/gpu/make-mp091-deps.sh on the CPU machine)"
  exit 1
fi
site=$tmp/site
export MUSTER_MP_LIBDIR="$site/nvidia/nccl/lib:$site/nvidia/cu13/lib:$site/nvidia/cublasmp/cu13/lib"

timeout -k 5 60 "$muster" providers > "$tmp/providers.txt" 2>&1
grep -i -A2 cusolvermp "$tmp/providers.txt"
# the provider's note: "available: cuSOLVERMp 0.9.1, cuBLASMp 0.10.0, NCCL 2.30.7"
if grep -q "available: cuSOLVERMp 0\.9\.1, cuBLASMp 0\.10\.[0-9]*, NCCL 2\.\(29\|[3-9][0-9]\)\." "$tmp/providers.txt"; then
  pass=$((pass + 1))
else
  echo "FAILED: muster providers does not report cuSOLVERMp 0.9.1 with NCCL >= 2.29"
  exit 1
fi

run() { # run COUNTED ENV ROUTINE DTYPE RANKS N [options]
  counted=$1 envset=$2 routine=$3 dtype=$4 ranks=$5 nn=$6
  shift 6
  cli_run "$counted" "$envset" cusolvermp "$routine" "$dtype" processes "$ranks" "$nn" "$@"
}
n=1001
echo "# n=$n seed=$seed (MP_GPU_SEED=$seed to replay); GPUs: $ngpu"
cli_header
# every routine on one rank: "ROUTINE [options]" x f64, c64
for spec in "potrs --nrhs 3" syevd "syevd --no-vectors" "getrs --nrhs 2" "gels --nrhs 2 --m $((2 * n))"; do
  # shellcheck disable=SC2086 # spec: the routine and its options, split on purpose
  set -- $spec
  routine=$1
  shift
  run 1 - "$routine" f64 1 "$n" "$@"
  run 1 - "$routine" c64 1 "$n" "$@"
done
run 1 - syevd f64 1 8192
if [ "$ngpu" -ge 2 ]; then
  for dtype in f64 c128; do
    run 1 - potrs "$dtype" 2 "$n" --nrhs 3
    run 1 - syevd "$dtype" 2 "$n"
    run 1 - getrs "$dtype" 2 "$n" --nrhs 3
  done
  expect_refused="gels on 2 processes" run 1 - gels f64 2 "$n" --nrhs 3 --m $((2 * n))
  run 1 - syevd f64 "$ngpu" 8192
fi
if [ "$ngpu" -ge 4 ]; then
  run 1 - potrs c64 4 "$n" --nrhs 3
  run 1 - syevd c128 4 "$n"
  run 1 - getrs f32 4 "$n" --nrhs 2
fi
# gesvd and polar (0.9 only): "ROUTINE DTYPE RANKS [options]", n = 600
ns=600
while read -r routine dtype ranks opts; do
  [ -n "$routine" ] || continue
  [ "$ranks" -le "$ngpu" ] || continue
  # shellcheck disable=SC2086 # opts: the options, split on purpose
  run 1 - "$routine" "$dtype" "$ranks" "$ns" $opts </dev/null # the loop reads the list on stdin
done <<EOF_SVD
gesvd f64 1
gesvd c64 1 --m 1200
gesvd f64 1 --m 300
gesvd c64 1 --m 1200 --no-vectors
gesvd f64 1 --m 300 --full
polar f64 1
polar c64 1 --m 1200
gesvd f64 2 --m 1200
gesvd c64 2 --m 300
gesvd c64 2 --m 300 --full
gesvd f64 2 --no-vectors
polar f64 2
polar c64 2 --m 1200
gesvd f64 4
gesvd c64 4 --m 1200 --full
gesvd f64 4 --m 300
polar c64 4 --m 1200
polar f64 4
EOF_SVD
expect_refused="polar of a wide A" run 1 - polar f64 1 "$ns" --m 300
[ "$ngpu" -ge 2 ] && expect_refused="polar of a wide A" run 1 - polar c64 2 "$ns" --m 300
left=$(job_left "$MUSTER_JOB")
[ "$left" = 0 ] || { fail=$((fail + 1)); echo "FAILED: $left segment(s) of job $MUSTER_JOB left in /dev/shm"; }
echo "# run-mp091-tests.sh: $(($(date +%s) - t_start)) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
