#!/bin/sh
# `muster solve` in GPU mode, as a user runs it, on a machine with 2 GPUs
# (docs/cli-solve.md), from a build folder copied there:
#     <build>/tests/gpu/run-cli-gpu.sh [N]        (N: matrix order, default 2048)
# The provider is NOT named: the runtime's choice (docs/choice.md) picks the
# engine, and each run is checked against what the choice says.  Runs potrs
# x f32, f64, c64, c128, potri and syevd x f64, c64, each in threads and
# processes mode on 2 ranks, plus one run on 1 rank and one with --devices
# 1,0, and geqrf, gesvd (values too) and polar on a tall or wide A of n =
# 384 columns (cusolverdn: no other GPU engine has them); each must exit 0 with "ok":true (residual under 64 n eps),
# "mem":"cuda" on the expected GPUs, a GPU engine as "provider", and a
# choice that names it: with MUSTER_LOG=info every "choice ...: X wins:
# REASON" line on stderr (the command's choice, the leader's, the other
# ranks') names X = that provider, the leader's REASON is the JSON's
# "reason", nothing was forced, and a "fastest: A s (...) vs Y B s" reason
# has A < B and Y another engine.  One run where rank 1 names a GPU that
# does not exist (--devices 0,7, processes mode) must fail at once (exit 1,
# that reason, under 20 s).  Prints one line per run (the engine and the
# start of its reason), how many runs each engine won, and "N passed, M
# failed"; exits 1 on any failure or if anything of its job is left in
# /dev/shm.  About a minute on 2 H200.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
n=${1:-2048}
export MUSTER_JOB="cligpu$$"
unset MUSTER_PROVIDER
seed=${CLI_GPU_SEED:-$(date +%s)}
t_start=$(date +%s)
won=""

echo "# muster solve on the runtime's choice; n=$n seed=$seed (CLI_GPU_SEED=$seed to replay)"
"$muster" providers || echo "(muster providers: exit $?)"
printf '%-6s %-5s %-9s %-5s %-8s %-6s %-11s %-10s %-9s %s\n' \
  routine dtype mode ranks devices mem provider residual seconds result

# choice_check PROVIDER REASON LOG: why the choice does not name PROVIDER
# (empty when it does).  Only the choices for this run's routine, dtype and
# n on GPU memory count: the CLI also logs one before the ranks exist ("any
# memory") and the ranks one for a forced provider's check (n=0), which may
# name another engine.  Uses routine, dtype, n.
choice_check() {
  wins=$(grep -F "choice for $routine $dtype n=$n " "$3" | grep -F ", cuda memory," |
         sed -n 's/.* info: choice for .*: \([A-Za-z0-9._-]*\) wins: .*/\1/p' | sort -u | tr '\n' ' ')
  [ "$wins" = "$1 " ] || { echo "the choice's log names '$wins', not $1"; return; }
  head=$(printf '%s' "$2" | cut -c1-60)
  [ -n "$head" ] && grep -F " $1 wins: $head" "$3" >/dev/null || { echo "reason '$head' not in the log's choice"; return; }
  case $2 in forced*) echo "the choice was forced: $2"; return ;; esac
  fast=$(printf '%s' "$2" | sed -n 's/^fastest: \([0-9.e+-]*\) s (.*) vs \([A-Za-z0-9._-]*\) \([0-9.e+-]*\) s.*/\1 \2 \3/p')
  [ -z "$fast" ] || printf '%s\n' "$fast" | awk -v p="$1" '!($1 < $3 && $2 != p) {
    printf "\"fastest\" but %s s vs %s %s s\n", $1, $2, $3 }'
}

# run ROUTINE DTYPE MODE RANKS EXPECTED_DEVICES [extra options]
run() {
  routine=$1 dtype=$2 mode=$3 ranks=$4 want_dev=$5
  shift 5
  err=$(mktemp)
  out=$(MUSTER_LOG=info timeout 90 "$muster" solve "$routine" --n "$n" --dtype "$dtype" --mode "$mode" \
        --ranks "$ranks" --seed "$seed" --json "$@" 2>"$err")
  rc=$?
  prov=$(field provider "$out") mem=$(field mem "$out") dev=$(field devices "$out") reason=$(field reason "$out")
  res=$(field residual "$out") secs=$(field seconds "$out") ok=$(field ok "$out")
  why=""
  [ "$rc" = 0 ] || why="exit $rc"
  case $prov in cusolvermg | cusolverdn | cusolvermp) ;; *) why="$why provider '$prov' (not a GPU engine)" ;; esac
  [ "$mem" = cuda ] || why="$why mem '$mem'"
  [ "$dev" = "$want_dev" ] || why="$why devices '$dev' (want $want_dev)"
  [ "$ok" = true ] || why="$why ok '$ok'"
  bad=$(choice_check "$prov" "$reason" "$err")
  [ -z "$bad" ] || why="$why $bad"
  if [ -z "$why" ]; then
    result=ok
    pass=$((pass + 1))
    won="$won$prov
"
  else
    result="FAILED:$why"
    fail=$((fail + 1))
  fi
  printf '%-6s %-5s %-9s %-5s %-8s %-6s %-11s %-10s %-9s %s\n' \
    "$routine" "$dtype" "$mode" "$ranks" "$dev" "$mem" "$prov" "$res" "$secs" "$result"
  echo "    choice: $(printf '%s' "$reason" | cut -c1-150)"
  if [ -n "$why" ]; then
    [ -n "$out" ] && echo "    stdout: $(printf '%s' "$out" | cut -c1-400)"
    grep -v ' info: ' "$err" | sed 's/^/    stderr: /' | head -5
  fi
  rm -f "$err"
}

# fail ROUTINE MODE MESSAGE [options]: must exit 1 within 20 s, MESSAGE on stderr
fail_case() {
  routine=$1 mode=$2 msg=$3
  shift 3
  t0=$(date +%s)
  err=$(timeout 90 "$muster" solve "$routine" --n "$n" --mode "$mode" --seed "$seed" --json "$@" 2>&1 >/dev/null)
  rc=$?
  dt=$(( $(date +%s) - t0 ))
  opts="$*"
  if [ "$rc" = 1 ] && [ "$dt" -le 20 ] && printf '%s' "$err" | grep -q "$msg"; then
    result=ok
    pass=$((pass + 1))
  else
    result="FAILED: exit $rc after $dt s, want exit 1 with '$msg'"
    fail=$((fail + 1))
  fi
  printf '%-6s %-5s %-9s %-5s %-8s %-6s %-11s %-10s %-9s %s\n' \
    "$routine" f64 "$mode" 2 "${opts##*--devices }" - - - "${dt}s" "expected error: $result"
  [ "$result" = ok ] || echo "    stderr: $err" | head -5
}

for mode in threads processes; do
  for dtype in f32 f64 c64 c128; do run potrs "$dtype" "$mode" 2 0,1 --nrhs 3; done
  for dtype in f64 c64; do run potri "$dtype" "$mode" 2 0,1; done
  for dtype in f64 c64; do run syevd "$dtype" "$mode" 2 0,1; done
done
run potrs f64 threads 1 0
run syevd f64 processes 2 1,0 --devices 1,0
# geqrf, gesvd, polar: cusolverdn is the GPU engine that has them (the
# choice must find it on CUDA memory); small, as the CLI checks them in
# O(m n k) on the host
n_was=$n
n=384
run geqrf f64 threads 2 0,1 --m 512
run gesvd c64 processes 2 0,1 --m 256
run gesvd f32 threads 1 0 --m 512 --no-vectors
run polar c128 processes 2 0,1 --m 256
n=$n_was
fail_case potrs processes "GPU 7 does not exist" --ranks 2 --devices 0,7

left=$(job_left "$MUSTER_JOB")
if [ "$left" != 0 ]; then
  echo "FAILED: $left segment(s) of job $MUSTER_JOB left in /dev/shm"
  fail=$((fail + 1))
fi
echo "# runs each engine won: $(printf '%s' "$won" | sort | uniq -c | awk '{printf "%s%s %d", (NR > 1 ? ", " : ""), $2, $1}')"
echo "# $(( $(date +%s) - t_start )) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
