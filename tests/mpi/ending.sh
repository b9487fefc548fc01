#!/usr/bin/env bash
# tests/mpi/ending.sh - sourced, not run: the fault tests' clock and their
# wait for a job to end (fault.sh: the driver; cli-fault.sh: the CLI).
#
#   now                     seconds since the epoch, with nanoseconds
#   since T0                seconds since T0, "%.2f"
#   past T0 S               true when more than S seconds have passed since T0
#   ended PID               true when PID is gone or a zombie (only its
#                           parent may reap it: it has ended)
#   await_end BOUND PID...  waits until every PID has ended, at most BOUND
#                           seconds; sets status ("ok", or "still running
#                           after BOUND s: <pids>", having SIGKILLed them)
#                           and took (the seconds it waited)
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
past() { awk -v t="$(since "$1")" -v b="$2" 'BEGIN { exit !(t > b) }'; }
ended() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
  [ "$st" = Z ]
}
await_end() {
  local bound=$1 t0 left p
  shift
  t0=$(now)
  status=ok
  while :; do
    left=""
    for p in "$@"; do ended "$p" || left="$left $p"; done
    [ -z "$left" ] && break
    if past "$t0" "$bound"; then
      status="still running after ${bound} s:$left"
      kill -9 "$@" 2>/dev/null
      break
    fi
    sleep 0.05
  done
  took=$(since "$t0")
}
