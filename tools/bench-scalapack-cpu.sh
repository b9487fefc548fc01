#!/bin/sh
# tools/bench-scalapack-cpu.sh - the scalapack provider on R MPI ranks (one
# core each) against the lapack provider and LAPACKE on one process with T
# OpenBLAS threads, f64, side by side in one run on one machine (issue 13's
# CPU figure; docs/performance/scalapack-cpu.md has the table it made).
#
#   tools/bench-scalapack-cpu.sh [--build DIR] [--routines potrs,syevd]
#       [--n 8192,16384] [--ranks "4 8 16"] [--threads 16] [--reps 3]
#       [--tile T] [--modes lapacke,muster-threads] [--mpirun-args "..."]
#
# scalapack: `mpi-scalapack bench` (tests/mpi/bench.c: one collective_solve
# per call, the caller's 1-D block layout redistributed by the provider, the
# slowest rank's time, a warm-up call, then the median of the reps).  Tile:
# the provider's automatic one (providers/scalapack/grid.c: 128 for potrs, 64
# for syevd at these sizes) unless --tile.  lapack: `muster bench --ranks 1
# --modes lapacke,muster-threads` (median of the reps after one warm-up;
# --modes muster-threads skips LAPACKE, to save time on syevd).
# potrs has one right-hand side; syevd computes vectors in both.  Ratio =
# lapack provider's median / scalapack's (> 1: scalapack faster).  Needs
# mpirun and libscalapack-openmpi.so.2.2 where the loader finds it (set
# LD_LIBRARY_PATH to carry it to a machine without the package).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build"
routines="potrs,syevd"
ns="8192,16384"
ranks_list="4 8 16"
threads=16
reps=3
tile=""
modes="lapacke,muster-threads"
mpirun_args="--allow-run-as-root --oversubscribe --bind-to core"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --routines) routines=$2; shift 2 ;;
    --n) ns=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --tile) tile=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --mpirun-args) mpirun_args=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-scalapack-cpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
driver="$build/tests/mpi-scalapack"
muster="$build/bin/muster"
for f in "$driver" "$muster"; do
  [ -x "$f" ] || { echo "bench-scalapack-cpu.sh: $f not built (scons)" >&2; exit 1; }
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
echo "# machine: ${cpu:-unknown CPU}, $(nproc) cores online, $(uname -sr)"
echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(mpirun --version 2>&1 | head -n1); reps $reps (+1 warm-up), f64"

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for r in $(echo "$routines" | tr ',' ' '); do
  for n in $(echo "$ns" | tr ',' ' '); do
    out=$(OPENBLAS_NUM_THREADS=$threads "$muster" bench --routine "$r" --n "$n" --ranks 1 \
            --modes "$modes" --reps "$reps" --warmup 1)
    echo "$out" | sed 's/^/# /'
    echo "$out" | awk -v r="$r" -v t="$threads" \
      '$2 == "lapacke" {print r, $1, "lapacke-" t, $3} $2 == "muster-threads" {print r, $1, "lapack-" t, $3}' >>"$results"
    for np in $ranks_list; do
      t=$tile
      if [ -z "$t" ]; then if [ "$r" = syevd ]; then t=64; else t=128; fi; fi
      line=$(OPENBLAS_NUM_THREADS=1 mpirun $mpirun_args -np "$np" "$driver" bench \
               --routine "$r" --n "$n" --tiles "$t" --reps "$reps" | grep '^bench ')
      echo "$line"
      echo "$r $n scalapack-$np $(echo "$line" | sed 's/.*: \([0-9.]*\) s (median.*/\1/')" >>"$results"
    done
  done
done

echo
echo "| routine | n | engine | median s | lapack provider / this |"
echo "| --- | ---: | --- | ---: | ---: |"
awk -v t="$threads" '
  {key = $1 " " $2; sec[key, $3] = $4; order[++k] = key " " $3}
  $3 == "lapack-" t {base[key] = $4}
  END {
    # rows in run order: the lapack baseline first, then scalapack per R
    for (i = 1; i <= k; i++) {
      split(order[i], f, " "); key = f[1] " " f[2]
      ratio = (base[key] > 0 && sec[key, f[3]] > 0) ? sprintf("%.2fx", base[key] / sec[key, f[3]]) : "-"
      printf "| %s | %s | %s | %s | %s |\n", f[1], f[2], f[3], sec[key, f[3]], ratio
    }
  }' "$results"
