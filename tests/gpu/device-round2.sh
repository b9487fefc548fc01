#!/bin/sh
# Device round 2: the GPU test command again, a few extra raw points for the
# tile table, then the benchmark (capacity run included).  Logs under $OUT.
export NCCL_NVLS_ENABLE=0
B=build-C
G=$B/tests/gpu
timeout 240 $G/run-gpu-tests.sh > $OUT/gpu-test.log 2>&1; echo "gpu-test rc=$?" > $OUT/summary.txt
{
for t in 1024 4096; do $G/raw-mg potrs f64 65536 $t 2 2; done
for t in 512 1024 2048 4096 16384; do $G/raw-mg potrs f64 16384 $t 1 3; done
} > $OUT/extra.log 2>&1
timeout 330 $G/run-gpu-bench.sh > $OUT/bench.log 2>&1; echo "bench rc=$?" >> $OUT/summary.txt
echo "shm left: $(ls /dev/shm | grep -c muster)" >> $OUT/summary.txt
cat $OUT/summary.txt
grep -E "^not ok|passed" $OUT/gpu-test.log | head -30
grep -A3 "^not ok" $OUT/gpu-test.log | grep "^    " | head -20
grep -E "kill|rank . its|survivor" $OUT/gpu-test.log | head
cat $OUT/extra.log
grep -v "^|" $OUT/bench.log | tail -25
grep "^|" $OUT/bench.log
