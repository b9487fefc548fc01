#!/bin/sh
# The tiled engine's schedule variants (docs/performance/tiled.md, "The
# schedule's knobs"), one command from a build folder copied to a machine
# with 4 GPUs:
#     <build>/tests/gpu/run-tiled-sweep.sh [check] [bench]
# check (under 180 s on 4 x H200): gpu-test --provider tiled --only
#   MUSTER_TILED_LOOKAHEAD, then --only MUSTER_TILED_OVERLAP: the
#   correctness cases of every new knob value (lookahead 2, 3, 4, the
#   priority stream on and off, the moves overlapped; 1, 2, 4 GPUs;
#   threads and processes; not-PD (with A checked unchanged), NaN, log
#   det, cyclic, a kill), each solved twice (the second call creates
#   nothing).
# bench (under 300 s on 4 x H200): muster-gpu-bench --provider tiled
#   --routine potrs --dtype f64 --n 32768,65536 --reps 3 --columns default
#   with MUSTER_TILED_TIMING=1 for R GPUs x lookahead x priority x overlap
#   (SWEEP_RS, SWEEP_LS, SWEEP_PRIOS, SWEEP_OVERLAPS, SWEEP_NS override
#   "4 2", "1", "0", "0 1", 32768,65536: by default the moves overlapped or
#   not with the measured schedule, L = 1, priority 0; SWEEP_LS="1 2 3"
#   SWEEP_PRIOS="0 1" SWEEP_OVERLAPS=0 is the earlier lookahead sweep;
#   SWEEP_TILE=T sets MUSTER_TILED_TILE for every run), each run under
#   `timeout -k 5`; one line per variant and N:
#     sweep R=4 N=65536 L=1 prio=0 overlap=1: 0.6123 s 60.1% of peak (factor 0.5712 s)
#   WRONG on that line means the residual check failed, FAILED that the
#   run did not finish (or could not start: too few GPUs); a variant past
#   the time budget is "skipped".
# Neither argument: both, check first.  Exit status 0 when every case
# passed and every variant ran with good residuals.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
t0=$(date +%s)
rc=0
what="${*:-check bench}"
gpu_info

elapsed() { echo $(( $(date +%s) - t0 )); }

check() {
  echo "# check: gpu-test --provider tiled --only MUSTER_TILED_LOOKAHEAD"
  timeout -k 5 150 "$here/gpu-test" --provider tiled --only MUSTER_TILED_LOOKAHEAD || rc=1
  echo "# check: gpu-test --provider tiled --only MUSTER_TILED_OVERLAP"
  timeout -k 5 120 "$here/gpu-test" --provider tiled --only MUSTER_TILED_OVERLAP || rc=1
  echo "# check: $(elapsed) s"
}

# summary R L PRIO OVERLAP LOG: one line per N from a muster-gpu-bench log
summary() {
  awk -v R="$1" -v L="$2" -v P="$3" -v O="$4" '
    function flush() {
      if (n == "") return
      peak = 100.0 * (n * n * n / 3.0 + 2.0 * n * n) / t / (66.9e12 * R)
      printf "sweep R=%s N=%s L=%s prio=%s overlap=%s: %s s %.1f%% of peak (factor %s s)%s\n", R, n, L, P, O, t, peak, f, bad
      n = ""
    }
    /^  potrs f64 n=[0-9]+: default / {
      flush(); n = $3; sub(/^n=/, "", n); sub(/:$/, "", n); t = $5; f = "?"; bad = ""
      if ($0 ~ /\(WRONG\)/) bad = " WRONG"
    }
    /residual ratios .*FAILED/ { bad = " WRONG" }
    /tiled phases of its last solve/ { f = $0; sub(/.*factor /, "", f); sub(/,.*/, "", f) }
    END { flush() }' "$5"
}

bench() {
  [ -n "${SWEEP_TILE:-}" ] && echo "# sweep: MUSTER_TILED_TILE=$SWEEP_TILE"
  Rs="${SWEEP_RS:-4 2}" Ls="${SWEEP_LS:-1}" Ps="${SWEEP_PRIOS:-0}" Os="${SWEEP_OVERLAPS:-0 1}"
  Ns="${SWEEP_NS:-32768,65536}"
  ngpu=$(gpu_count)
  log=$(mktemp)
  tb=$(date +%s)
  for R in $Rs; do
    if [ "$R" -gt "$ngpu" ]; then
      echo "sweep R=$R: FAILED, not run ($ngpu GPU(s) here)"
      rc=1
      continue
    fi
    limit=$(( R >= 4 ? 40 : 55 )) # one invocation: start, fill, 4 solves of each N, residuals
    for L in $Ls; do
      for P in $Ps; do
        for O in $Os; do
          v="R=$R L=$L prio=$P overlap=$O"
          if [ $(( $(date +%s) - tb )) -gt $(( 290 - limit )) ]; then
            echo "sweep $v: skipped (time budget of the sweep spent)"
            continue
          fi
          ts=$(date +%s)
          if [ -n "${SWEEP_TILE:-}" ]; then export MUSTER_TILED_TILE="$SWEEP_TILE"; fi
          MUSTER_TILED_TIMING=1 MUSTER_TILED_LOOKAHEAD=$L MUSTER_TILED_PRIORITY=$P MUSTER_TILED_OVERLAP=$O \
            timeout -k 5 $limit "$here/muster-gpu-bench" --provider tiled --gpus "$R" --routine potrs --dtype f64 \
            --n "$Ns" --reps 3 --columns default >"$log" 2>&1
          st=$?
          summary "$R" "$L" "$P" "$O" "$log"
          if [ $st -ne 0 ] || grep -q WRONG "$log"; then
            rc=1
            why="exit $st"
            [ $st -eq 124 ] || [ $st -eq 137 ] && why="timed out after $limit s"
            echo "sweep $v: FAILED ($why); its log:"
            tail -20 "$log" | sed 's/^/    /'
          fi
          echo "#   ($(( $(date +%s) - ts )) s)"
        done
      done
    done
  done
  rm -f "$log"
  echo "# bench: $(( $(date +%s) - tb )) s"
}

for w in $what; do
  case "$w" in
    check) check ;;
    bench) bench ;;
    *) echo "usage: run-tiled-sweep.sh [check] [bench]" >&2; exit 2 ;;
  esac
done
echo "# run-tiled-sweep.sh: $(elapsed) s"
exit $rc
