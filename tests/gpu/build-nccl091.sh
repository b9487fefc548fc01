#!/bin/sh
# tests/gpu/build-nccl091.sh NCCL_SRC OUT - on the CPU machine: build the
# NCCL that make-mp091-deps.sh packs for cuSOLVERMp 0.9.1 (docs/gpu-scripts.md
# "cuSOLVERMp 0.9.1"): a source tree of NVIDIA/nccl >= 2.29 (2.30.7 tried)
# built into OUT (new or empty) for the GPU machines' sm_90 alone, with only
# the device functions a muster job can reach, so it travels (11.1 MiB
# without debug sections, 7.9 MiB as xz -9; all of NCCL's would not).
# Prints OUT/lib/libnccl.so.2 at the end.  14 to 17 minutes on 2 cores:
#     nice -n 19 tests/gpu/build-nccl091.sh ~/nccl /tmp/nccl-out
#
# ONLY_FUNCS (NCCL's src/device/generate.py) keeps the functions NCCL can
# pick here.  A function left out is not refused: generate.py maps its row
# to ncclDevFunc_Nop and enqueue.cc picks algorithm and protocol from the
# cost table without knowing what was built, so such a collective would run
# as a no-op and return wrong data with no error.  What the table can offer
# (graph/tuning.cc, enqueue.cc updateCollCostTable): Broadcast, Reduce and
# AllGatherV RING; AllGather and ReduceScatter RING and PAT; AllReduce TREE
# and RING; NVLS and NVLS_TREE only with NVLS on (gpu-env.sh and the
# provider set NCCL_NVLS_ENABLE=0, and the GPU machines forbid NVLink
# multicast), CollNet only with NCCL_COLLNET_ENABLE=1 and a CollNet plugin.
# Redops and types: every reduction call in libcusolverMp 0.9.1 and
# libcublasmp 0.10 passes Sum, Prod, Max or Min (no Avg, which is PreMulSum
# or SumPostDiv, and neither imports ncclRedOpCreatePreMulSum); f16, bf16
# and fp8 only in cuSOLVERMp's bf16 Newton-Schulz, which muster does not
# call (its dtypes are f32, f64 and complex ones, reduced as f32/f64 pairs).
# The symmetric kernels (src/device/symmetric, for window-registered
# buffers) are not filtered by ONLY_FUNCS and are all built.
set -eu
[ $# = 2 ] || { echo "usage: build-nccl091.sh NCCL_SRC OUT" >&2; exit 2; }
src=$1 out=$2
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -f "$src/src/device/generate.py" ] || { echo "$src is not an NCCL source tree" >&2; exit 1; }
# a fresh OUT: NCCL regenerates its device sources only when generate.py
# changes, so an old build folder would keep another ONLY_FUNCS
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "$out is not empty" >&2
  exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# NCCL compiles some host files with -I $CUDA_INC before its own headers;
# a toolkit that ships NCCL's headers (this one: 2.28.9) would then give
# them the old nccl.h and nccl_device/ (a compile error, or a silent
# mismatch), so they see the toolkit's include folder without NCCL's
inc=$out/cuda-include
mkdir -p "$inc"
for f in "$cuda"/include/*; do
  case ${f##*/} in nccl*) ;; *) ln -s "$f" "$inc/${f##*/}" ;; esac
done
sm90="-gencode=arch=compute_90,code=sm_90"
# NVCC_GENCODE_LDMC_FP8: NCCL builds its fp8 multimem kernels for sm_100f
# whatever NVCC_GENCODE says; on sm_90 they compile empty (their bodies
# are guarded by sm_100 and later, where alone sym_kernels.cc picks them)
make -C "$src" -j2 src.build BUILDDIR="$out" CUDA_HOME="$cuda" CUDA_INC="$inc" \
  NVCC_GENCODE="$sm90" NVCC_GENCODE_LDMC_FP8="$sm90" \
  ONLY_FUNCS="(SendRecv|(AllGather|AllGatherV|Broadcast) (RING|PAT) *|(AllReduce|Reduce|ReduceScatter) (Sum|Prod|MinMax) (i8|u8|i32|u32|i64|u64|f32|f64) (TREE|RING|PAT) *)"
ls -l "$out/lib/libnccl.so.2"
