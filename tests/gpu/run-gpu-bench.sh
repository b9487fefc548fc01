#!/bin/sh
# The GPU benchmark (docs/performance/gpu.md), one command on a GPU node:
#     <build>/tests/gpu/run-gpu-bench.sh [muster-gpu-bench options]
# e.g. --gpus 1 --quick --json bench.json (about 2 minutes on one H200);
# --list prints the rows the options select without touching a GPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../.." && pwd)
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
exec "$here/muster-gpu-bench" "$@"
