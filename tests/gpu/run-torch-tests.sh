#!/bin/sh
# muster_torch on 1 or 2 GPUs (docs/torch.md, docs/gpu-scripts.md), from the
# repository root of a tree whose build/ was made with the CUDA toolkit:
#     tests/gpu/run-torch-tests.sh [BUILD_DIR]          (default build)
# $PYTHON (default python3) needs torch with CUDA (2.4 or later); no pytest,
# no network.  Two steps, each with its own time limit:
#   1. one process holding a block per GPU (1 GPU, then 2 when there are 2):
#      every op x dtype, the caller's stream, gradcheck, torch.compile, the
#      docs' py-gpu examples (tests/python/torch/gpu_check.py local);
#   2. torchrun, one process per GPU (2, or 1 on a 1-GPU machine): every op
#      x dtype and potrs's gradient (gpu_check.py dist).
# Each prints PASS/FAIL lines and "gpu_check MODE: N passed, M failed";
# the script exits non-zero if a step failed (about 2-4 minutes in all;
# the limits, 360 s and 200 s, keep it under 10).  GPU_CHECK_N sets the order of
# the test matrices (default 600).  Logs go to $OUT if set.
set -u
build=${1:-build}
repo=$(pwd)
out=${OUT:-$repo}
PY=${PYTHON:-python3}
export MUSTER_BUILD="$repo/$build" MUSTER_LIB_DIR="$repo/$build/lib"
export MUSTER_PROVIDER_PATH="$repo/$build/lib/muster/providers"
export PYTHONPATH="$repo/adapters/torch:$repo/tests/python/torch${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0 MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-60} MUSTER_JOB=torchgpu$$
export OUT="$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
ngpu=$($PY -c 'import torch; print(torch.cuda.device_count())') || exit 1
$PY -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)'
[ "$ngpu" -ge 1 ] || { echo "run-torch-tests: no GPU visible to torch"; exit 1; }
nproc=$([ "$ngpu" -ge 2 ] && echo 2 || echo 1)
rc=0
echo "# 1. one process, 1..$nproc GPUs"
timeout 360 $PY tests/python/torch/gpu_check.py local 2>&1 | tee "$out/torch-gpu-local.log"
[ "$(grep -c '^gpu_check local: .* 0 failed' "$out/torch-gpu-local.log")" = 1 ] || rc=1
echo "# 2. torchrun, $nproc processes"
timeout 200 $PY -m torch.distributed.run --standalone --nproc-per-node "$nproc" \
  tests/python/torch/gpu_check.py dist 2>&1 | tee "$out/torch-gpu-dist.log"
[ "$(grep -c '^gpu_check dist: .* 0 failed' "$out/torch-gpu-dist.log")" = "$nproc" ] || rc=1
ls /dev/shm | grep "torchgpu$$" && { echo "segments left in /dev/shm"; rc=1; }
echo "run-torch-tests: $([ $rc = 0 ] && echo ok || echo FAILED)"
exit $rc
