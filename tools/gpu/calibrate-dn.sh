#!/bin/sh
# Measures the cusolverdn provider's cost table on the GPU machine this runs
# on (docs/choice.md "Measuring one"): 1 rank on GPU 0, every routine and
# dtype, the sizes below, median of 3 timed calls after 1 warm-up.
#     tools/gpu/calibrate-dn.sh BUILD OUTFILE
# Each routine appends its rows to OUTFILE (a failed point stops that
# routine and says so; the rows already written stay).
set -u
build=$1
out=$2
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers" NCCL_NVLS_ENABLE=0
m="$build/bin/muster"
: >"$out"
cal() { # routine dtypes sizes
  "$m" bench --calibrate --provider cusolverdn --routine "$1" --dtype "$2" --n "$3" --ranks 1 \
    --devices 0 --reps 3 --warmup 1 --out - >>"$out" || echo "calibrate $1 $2 failed" >&2
}
cal potrs f64,f32,c64,c128 1024,4096,8192,16384,32768
cal potri f64,f32,c64,c128 1024,4096,8192,16384
cal syevd f64,f32 1024,4096,8192,16384
cal syevd c64,c128 1024,4096,8192
