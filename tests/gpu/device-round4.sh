#!/bin/sh
# Device round 4: the GPU test command on every GPU of the machine (4 on nvidia-h200-x4).
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=index,name --format=csv,noheader > $OUT/summary.txt 2>&1
nvidia-smi topo -m >> $OUT/summary.txt 2>&1
timeout 420 build-C/tests/gpu/run-gpu-tests.sh > $OUT/gpu-test.log 2>&1; echo "gpu-test rc=$?" >> $OUT/summary.txt
echo "shm left: $(ls /dev/shm | grep -c muster)" >> $OUT/summary.txt
cat $OUT/summary.txt
grep -E "^not ok|passed" $OUT/gpu-test.log | head -30
grep -A3 "^not ok" $OUT/gpu-test.log | grep "^    " | head -20
grep -E "kill|rank . its|survivor" $OUT/gpu-test.log | head
