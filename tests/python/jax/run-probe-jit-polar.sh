#!/bin/bash
# A GPU probe (4 x H200, cuSOLVERMp 0.9.1 from build/deps091): jitted polar 611 x 401 f64 through
# muster_jax.distributed in every process, with the full error of each (the store test shows only
# the first failing process's tail), then a refused jitted gels, clear_failure() and a clean
# exit.  From the repo root: tests/python/jax/run-probe-jit-polar.sh [NPROC]  (about 60 s)
# Pass: every process prints "eager polar ok", "jitted polar ok", "cleared" and "exit clean".
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/mp091 && tar -xJf build/deps091/mp091.tar.xz -C /tmp/mp091
site=/tmp/mp091/site
export MUSTER_MP_LIBDIR=$site/nvidia/nccl/lib:$site/nvidia/cu13/lib:$site/nvidia/cublasmp/cu13/lib NCCL_NVLS_ENABLE=0
export LD_PRELOAD=$site/nvidia/nccl/lib/libnccl.so.2 MUSTER_BUILD=$PWD/build MUSTER_LIB_DIR=$PWD/build/lib
export PYTHONPATH=$PWD/adapters/jax XLA_PYTHON_CLIENT_PREALLOCATE=false MUSTER_JOB=jp$$ MUSTER_TIMEOUT=30
N=${1:-4}; port=$((20000 + RANDOM % 20000))
for i in $(seq 0 $((N - 1))); do timeout -k 5 150 python3 tests/python/jax/probe_jit_polar.py $i $N $port > /tmp/jp$i.log 2>&1 & done
wait
for i in $(seq 0 $((N - 1))); do grep "^proc" /tmp/jp$i.log; echo "exit-file $i: $(tail -c 300 /tmp/jp$i.log | tr '\n' ' ' | cut -c1-300)"; done
left=$(ls /dev/shm | grep -c "jp$$")
echo "segments left: $left"
for i in $(seq 0 $((N - 1))); do
  for want in "eager polar ok" "jitted polar ok" "cleared" "exit clean"; do
    grep -q "^proc $i: $want" /tmp/jp$i.log || { echo "FAILED: proc $i did not print '$want'"; exit 1; }
  done
done
[ "$left" = 0 ]
