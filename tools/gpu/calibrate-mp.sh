#!/bin/sh
# Measures the cusolvermp provider's cost table on the GPU machine this runs
# on (docs/choice.md "cusolvermp"): one process per GPU (--mode processes),
# 2 and 4 ranks on GPUs 0..3 of this node, f64, median of 3 timed calls after
# 1 warm-up, the sizes of issue 24's table.  Rows without an nnodes column:
# one node.  Writes OUTFILE from scratch; replace providers/cusolvermp/
# cusolvermp.cost (its "unmeasured" line included) with it.
#     tools/gpu/calibrate-mp.sh BUILD OUTFILE [RANKS]      RANKS default 2,4
# Needs cuSOLVERMp, cuBLASMp and NCCL where the provider finds them
# (docs/providers.md#cusolvermp); a failed point stops that routine and says
# so (the rows already written stay).
set -u
build=$1
out=$2
ranks=${3:-2,4}
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers" NCCL_NVLS_ENABLE=0
m="$build/bin/muster"
{
  echo "# muster cost table of provider cusolvermp (tools/gpu/calibrate-mp.sh), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# GPU: /'
  echo "# routine dtype ndevices n nrhs seconds"
} >"$out"
cal() { # routine sizes
  "$m" bench --calibrate --provider cusolvermp --routine "$1" --dtype f64 --n "$2" --ranks "$ranks" \
    --mode processes --devices 0,1,2,3 --reps 3 --warmup 1 --out - | grep -v '^#' >>"$out" ||
    echo "calibrate $1 failed" >&2
}
cal potrs 8192,16384,32768,65536
cal getrs 8192,16384
cal syevd 8192,16384
