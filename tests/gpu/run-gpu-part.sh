#!/bin/sh
# Part K of N of the full GPU tests (docs/gpu-testing.md), so that each fits
# one command on a GPU machine; parts 1..N on the same machine run, between
# them, everything run-gpu-tests.sh, run-dn-tests.sh and run-mp-tests.sh
# run (needs build/deps's cuSOLVERMp wheel, as run-mp-tests.sh does):
#     <build>/tests/gpu/run-gpu-part.sh K/N [--max-gpus R]
#     <build>/tests/gpu/run-gpu-part.sh --plan N [--max-gpus R]
# K/N runs the three scripts with --part K/N: each deals its gpu-test cases
# to the N parts by estimated time (gpu-test --part: longest first, each to
# the least loaded part) and its `muster solve` runs round-robin; the
# host-side unit tests run in part 1.  --plan N prints each part's
# estimated seconds (R GPUs, default 4; host-side tests not included, about
# 15 s in part 1), running nothing.  Prints each script's and the part's
# elapsed seconds; exits 1 when a script failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: run-gpu-part.sh K/N [--max-gpus R] | --plan N [--max-gpus R]" >&2; exit 2; }
[ $# -ge 1 ] || usage
plan=
case $1 in
  --plan) [ $# -ge 2 ] || usage; plan=$2; shift 2 ;;
  */*) part=$1; shift ;;
  *) usage ;;
esac
mg=
if [ $# -gt 0 ]; then
  [ $# = 2 ] && [ "$1" = --max-gpus ] || usage
  mg="--max-gpus $2"
fi

# estimate SCRIPT OPTS...: the seconds its --list says (gpu-test's
# "estimated S s" and run-mp-tests.sh's "S s estimated"), summed
estimate() {
  "$@" --list 2>/dev/null | sed -n 's/.*estimated \([0-9][0-9]*\) s.*/\1/p; s/.* \([0-9][0-9]*\) s estimated.*/\1/p' |
    awk '{s += $1} END {print s + 0}'
}

if [ -n "$plan" ]; then
  case $plan in '' | *[!0-9]*) usage ;; esac
  [ "$plan" -ge 1 ] && [ "$plan" -le 64 ] || usage
  k=1
  while [ "$k" -le "$plan" ]; do
    # shellcheck disable=SC2086 # $mg: empty or --max-gpus R
    g=$(estimate "$here/run-gpu-tests.sh" --part "$k/$plan" ${mg:---max-gpus 4})
    # shellcheck disable=SC2086
    d=$(estimate "$here/run-dn-tests.sh" --part "$k/$plan" ${mg:---max-gpus 4})
    # shellcheck disable=SC2086
    m=$(estimate "$here/run-mp-tests.sh" --part "$k/$plan" ${mg:---max-gpus 4})
    echo "part $k/$plan: run-gpu-tests.sh ~${g} s, run-dn-tests.sh ~${d} s, run-mp-tests.sh ~${m} s: ~$((g + d + m)) s"
    k=$((k + 1))
  done
  exit 0
fi

t_all=$(date +%s)
rc=0
for s in run-gpu-tests.sh run-dn-tests.sh run-mp-tests.sh; do
  t0=$(date +%s)
  echo "=== $s --part $part $mg"
  # shellcheck disable=SC2086
  "$here/$s" --part "$part" $mg || { rc=1; echo "FAILED: $s --part $part"; }
  echo "=== $s --part $part: $(($(date +%s) - t0)) s"
done
echo "=== run-gpu-part.sh $part: $(($(date +%s) - t_all)) s; $([ $rc = 0 ] && echo passed || echo FAILED)"
exit $rc
