#!/bin/sh
# `muster solve` in GPU mode, as a user runs it, on a machine with 2 GPUs
# (docs/cli.md), from a build folder copied there:
#     <build>/tests/gpu/run-cli-gpu.sh [N]        (N: matrix order, default 2048)
# The provider is NOT named: the default choice must be cusolvermg (priority
# 100, CUDA memory) wherever its probe finds GPUs.  Runs potrs x f32, f64,
# c64, c128, potri and syevd x f64, c64, each in threads and processes mode
# on 2 ranks, plus one run on 1 rank and one with --devices 1,0; each must
# exit 0 with "provider":"cusolvermg", "mem":"cuda", the expected GPUs and
# "ok":true (residual under 64 n eps) in its JSON; and one run where rank 1
# names a GPU that does not exist (--devices 0,7, processes mode) must fail
# at once (exit 1, that reason, under 20 s).  Prints one line per run
# and "N passed, M failed"; exits 1 on any failure or if anything of its job
# is left in /dev/shm.  About a minute on 2 H200.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../.." && pwd)
muster="$build/bin/muster"
n=${1:-2048}
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers"
export NCCL_NVLS_ENABLE=0
export MUSTER_JOB="cligpu$$"
unset MUSTER_PROVIDER
seed=${CLI_GPU_SEED:-$(date +%s)}
pass=0
fail=0
t_start=$(date +%s)

echo "# muster solve on the default provider; n=$n seed=$seed (CLI_GPU_SEED=$seed to replay)"
"$muster" providers || echo "(muster providers: exit $?)"
printf '%-6s %-5s %-9s %-5s %-8s %-6s %-11s %-10s %-9s %s\n' \
  routine dtype mode ranks devices mem provider residual seconds result

field() { # field NAME JSON: the raw value of "NAME": (string quotes dropped)
  printf '%s' "$2" | sed -n "s/.*\"$1\":\(\"[^\"]*\"\|\[[^]]*\]\|[^,}]*\).*/\1/p" | tr -d '"[]'
}

# run ROUTINE DTYPE MODE RANKS EXPECTED_DEVICES [extra options]
run() {
  routine=$1 dtype=$2 mode=$3 ranks=$4 want_dev=$5
  shift 5
  err=$(mktemp)
  out=$(timeout 90 "$muster" solve "$routine" --n "$n" --dtype "$dtype" --mode "$mode" \
        --ranks "$ranks" --seed "$seed" --json "$@" 2>"$err")
  rc=$?
  prov=$(field provider "$out") mem=$(field mem "$out") dev=$(field devices "$out")
  res=$(field residual "$out") secs=$(field seconds "$out") ok=$(field ok "$out")
  why=""
  [ "$rc" = 0 ] || why="exit $rc"
  [ "$prov" = cusolvermg ] || why="$why provider '$prov'"
  [ "$mem" = cuda ] || why="$why mem '$mem'"
  [ "$dev" = "$want_dev" ] || why="$why devices '$dev' (want $want_dev)"
  [ "$ok" = true ] || why="$why ok '$ok'"
  if [ -z "$why" ]; then
    result=ok
    pass=$((pass + 1))
  else
    result="FAILED:$why"
    fail=$((fail + 1))
  fi
  printf '%-6s %-5s %-9s %-5s %-8s %-6s %-11s %-10s %-9s %s\n' \
    "$routine" "$dtype" "$mode" "$ranks" "$dev" "$mem" "$prov" "$res" "$secs" "$result"
  if [ -n "$why" ]; then
    [ -n "$out" ] && echo "    stdout: $(printf '%s' "$out" | cut -c1-400)"
    sed 's/^/    stderr: /' "$err" | head -5
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
fail_case potrs processes "GPU 7 does not exist" --ranks 2 --devices 0,7

# segments of the job, of any pid namespace: muster.<uid>.<pidns>.<job>.<group>
left=$(ls -A /dev/shm | awk -F. -v u="$(id -u)" -v j="$MUSTER_JOB" \
  '$1 == "muster" && $2 == u && $3 ~ /^[0-9]+$/ && $4 == j' | wc -l)
if [ "$left" != 0 ]; then
  echo "FAILED: $left segment(s) of job $MUSTER_JOB left in /dev/shm"
  fail=$((fail + 1))
fi
echo "# $(( $(date +%s) - t_start )) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
