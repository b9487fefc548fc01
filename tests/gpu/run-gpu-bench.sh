#!/bin/sh
# The GPU benchmark (docs/performance/gpu.md), one command on a 2-GPU node:
#     <build>/tests/gpu/run-gpu-bench.sh [muster-gpu-bench options]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../.." && pwd)
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
exec "$here/muster-gpu-bench" "$@"
