#!/bin/sh
# Device round 3: the GPU test command and the benchmark.
export NCCL_NVLS_ENABLE=0
B=build-C
G=$B/tests/gpu
timeout 240 $G/run-gpu-tests.sh > $OUT/gpu-test.log 2>&1; echo "gpu-test rc=$?" > $OUT/summary.txt
timeout 330 $G/run-gpu-bench.sh > $OUT/bench.log 2>&1; echo "bench rc=$?" >> $OUT/summary.txt
echo "shm left: $(ls /dev/shm | grep -c muster)" >> $OUT/summary.txt
cat $OUT/summary.txt
grep -E "^not ok|passed" $OUT/gpu-test.log | head -30
grep -A3 "^not ok" $OUT/gpu-test.log | grep "^    " | head -20
grep -E "kill|rank . its|survivor" $OUT/gpu-test.log | head
grep -v "^|" $OUT/bench.log | tail -25
grep "^|" $OUT/bench.log
