#!/bin/sh
# tools/bench-rendezvous.sh - rendezvous latency of muster against glibc's
# pthread_barrier, for 2, 4 and 8 participants, threads and processes, side
# by side; prints a markdown table (docs/performance/rendezvous.md has one).
#
#   tools/bench-rendezvous.sh [--muster PATH] [--rounds K] [--repeat N] [--ranks "2 4 8"]
#
# Each cell runs `muster rendezvous --ranks R --mode M --rounds K --baseline
# --json` N times (each run measures muster, then pthread_barrier) and
# reports, per statistic, the median over the N runs.  Latencies are rank
# 0's, in microseconds.  Run it on an otherwise idle machine.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
muster="$here/../build/bin/muster"
rounds=20000
repeat=5
ranks_list="2 4 8"
while [ $# -gt 0 ]; do
  case "$1" in
    --muster) muster=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-rendezvous.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$muster" ] || { echo "bench-rendezvous.sh: $muster not built (scons)" >&2; exit 1; }

# value of "key":NUMBER inside the object that follows "section": in one JSON line
field() { # json section key
  printf '%s\n' "$1" | sed -n "s/.*\"$2\":{[^}]*\"$3\":\([-0-9.e]*\).*/\1/p"
}
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
echo "machine: ${cpu:-unknown CPU}, $(nproc) cores online, $(uname -sr)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: muster rendezvous --ranks R --mode M --rounds $rounds --baseline --json (median of $repeat runs per cell)"
echo
echo "| mode | ranks | muster round median | muster round p99 | pthread_barrier median | pthread_barrier p99 | ratio (median) | ratio (p99) | cycle on reused group, median | cycle p99 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for mode in threads processes; do
  for r in $ranks_list; do
    tmp=$(mktemp)
    i=0
    while [ $i -lt "$repeat" ]; do
      out=$("$muster" rendezvous --ranks "$r" --mode "$mode" --rounds "$rounds" --baseline --json)
      main=$(printf '%s\n' "$out" | sed 's/"baseline":.*//')
      base=$(printf '%s\n' "$out" | sed 's/.*"baseline"://')
      printf '%s %s %s %s %s %s\n' \
        "$(field "$main" round_us median)" "$(field "$main" round_us p99)" \
        "$(field "$base" round_us median)" "$(field "$base" round_us p99)" \
        "$(field "$main" cycle_us median)" "$(field "$main" cycle_us p99)" >>"$tmp"
      i=$((i + 1))
    done
    col() { awk -v c="$1" '{print $c}' "$tmp" | median; }
    mr=$(col 1); mp=$(col 2); br=$(col 3); bp=$(col 4); cr=$(col 5); cp=$(col 6)
    rm -f "$tmp"
    awk -v mode="$mode" -v r="$r" -v mr="$mr" -v mp="$mp" -v br="$br" -v bp="$bp" \
        -v cr="$cr" -v cp="$cp" 'BEGIN {
      printf "| %s | %d | %.2f us | %.2f us | %.2f us | %.2f us | %.2fx | %.2fx | %.2f us | %.2f us |\n",
             mode, r, mr, mp, br, bp, (br > 0 ? mr / br : 0), (bp > 0 ? mp / bp : 0), cr, cp }'
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
