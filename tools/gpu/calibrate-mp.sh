#!/bin/sh
# Measures the cusolvermp provider's cost table on the GPU machine this runs
# on (docs/choice.md "cusolvermp"): one process per GPU (--mode processes),
# 2 and 4 ranks on GPUs 0..3 of this node, f64, median of 3 timed calls after
# 1 warm-up, the sizes of issue 24's table.  Rows without an nnodes column:
# one node.  Writes OUTFILE from scratch, its rows under a line "version V"
# of the cuSOLVERMp release the provider loaded (as `muster providers`
# reports it; MP_VERSION=V says it where that cannot: docs/choice.md, the
# table's rows of each release); put them in providers/cusolvermp/
# cusolvermp.cost in place of that release's block (the other releases'
# rows stay).
#     tools/gpu/calibrate-mp.sh BUILD OUTFILE [RANKS]      RANKS default 2,4
# Needs cuSOLVERMp, cuBLASMp and NCCL where the provider finds them
# (docs/providers/cusolvermp.md); a failed point stops that routine and says
# so (the rows already written stay).
set -u
build=$1
out=$2
ranks=${3:-2,4}
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers" NCCL_NVLS_ENABLE=0
m="$build/bin/muster"
# the release loaded: the provider's note, "available: cuSOLVERMp 0.9.1, cuBLASMp 0.10.0, NCCL 2.30.7"
libs=$("$m" providers 2>/dev/null | sed -n 's/.*available: \(cuSOLVERMp [0-9][0-9.]*,.*\)$/\1/p' | head -n 1)
ver=${MP_VERSION:-$(echo "$libs" | sed -n 's/^cuSOLVERMp \([0-9][0-9.]*\),.*/\1/p')}
if [ -z "$ver" ]; then
  echo "calibrate-mp: no cuSOLVERMp version from \`muster providers\` (is cusolvermp available?); set MP_VERSION" >&2
  exit 1
fi
{
  echo "# muster cost table of provider cusolvermp (tools/gpu/calibrate-mp.sh), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# GPU: /'
  echo "# ${libs:-cuSOLVERMp $ver (MP_VERSION)}"
  echo "# routine dtype ndevices n nrhs seconds"
  echo "version $ver"
} >"$out"
# One `muster bench` per point, so that a run cut short keeps the rows it
# finished: the matrix of each point is generated and checked on the host
# (on 4 x H200's host, 2026-11-27, the four potrs sizes on 2 and 4
# processes did not finish in 200 s; 65536 alone is about a minute).
cal() { # routine sizes
  for n in $(echo "$2" | tr , ' '); do
    t0=$(date +%s)
    "$m" bench --calibrate --provider cusolvermp --routine "$1" --dtype f64 --n "$n" --ranks "$ranks" \
      --mode processes --devices 0,1,2,3 --reps 3 --warmup 1 --out - | grep -v '^#' >>"$out" ||
      { echo "calibrate $1 n=$n failed" >&2; return; }
    echo "calibrate-mp: $1 n=$n on $ranks ranks: $(( $(date +%s) - t0 )) s" >&2
  done
}
# SIZES_POTRS, SIZES_GETRS, SIZES_SYEVD: other sizes (comma-separated)
cal potrs "${SIZES_POTRS:-16384,32768,65536,8192}"
cal syevd "${SIZES_SYEVD:-8192,16384}"
cal getrs "${SIZES_GETRS:-16384,8192}"
