#!/bin/sh
# tests/fuzz/run-fuzz.sh [SECONDS] - build the libFuzzer targets of
# tests/fuzz with clang (ASan+UBSan+libFuzzer; Debian: clang-14 and
# libclang-rt-14-dev) into build-fuzz/ and run each for SECONDS (default
# 60).  Exit status non-zero on a finding; the crashing input is left in
# build-fuzz/ (replay: build-fuzz/fuzz_parse build-fuzz/crash-...).
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-60}
cc=${CLANG:-clang}
out=build-fuzz
mkdir -p "$out/corpus-parse"
# the runtime's parsing sources only: no segment is ever created
$cc -g -O1 -std=gnu11 -D_GNU_SOURCE -pthread -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Iinclude -Iruntime \
  tests/fuzz/fuzz_parse.c runtime/base/parse.c runtime/base/env.c runtime/base/error.c runtime/base/dtype.c \
  runtime/shm/segment.c runtime/shm/segment_name.c runtime/base/proc.c -o "$out/fuzz_parse"
for seed in 0 -1 64 9223372036854775807 18446744073709551616 1e300 inf 0.5 \
    "lapack,syevd=cusolvermg" "=,=,potrs=" "/a:/b" "0,1,2"; do
  printf '%s' "$seed" > "$out/corpus-parse/$(printf '%s' "$seed" | md5sum | cut -c1-12)"
done
"$out/fuzz_parse" -max_total_time="$secs" -max_len=256 -artifact_prefix="$out/" \
  "$out/corpus-parse"
