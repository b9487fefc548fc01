#!/bin/sh
# One device call: environment facts, the GPU test command, the tile sweep.
# Logs under $OUT; a compact summary last.
export NCCL_NVLS_ENABLE=0
B=build-C
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader > $OUT/env.txt 2>&1
nvidia-smi topo -m >> $OUT/env.txt 2>&1
uname -r >> $OUT/env.txt
timeout 330 $B/tests/gpu/run-gpu-tests.sh > $OUT/gpu-test.log 2>&1; echo "gpu-test rc=$?" >> $OUT/env.txt
timeout 170 $B/tests/gpu/muster-gpu-bench --sweep > $OUT/sweep.log 2>&1; echo "sweep rc=$?" >> $OUT/env.txt
ls /dev/shm | grep -c muster >> $OUT/env.txt
cat $OUT/env.txt
grep -E "^not ok|passed|FAIL|failed|error" $OUT/gpu-test.log | head -40
grep -B2 -A3 "^not ok" $OUT/gpu-test.log | grep "^    " | head -30
cat $OUT/sweep.log
