# tests/gpu/gpu-env.sh - what the GPU test scripts share (run-gpu-tests.sh,
# run-dn-tests.sh, run-mp-tests.sh, run-gpu-smoke.sh, run-gpu-part.sh,
# run-cli-gpu.sh), sourced by them after they set `here` (their folder,
# <build>/tests/gpu).  POSIX sh.  Sets build, muster, MUSTER_PROVIDER_PATH,
# NCCL_NVLS_ENABLE=0; defines:
#   gpu_info, gpu_count          the GPUs (nvidia-smi; 0 without one)
#   field NAME JSON              a value of `muster solve --json`
#   mp_libs DIR                  cuSOLVERMp from the wheel in <build>/deps
#   mp_libs_temp                 the same into a folder removed at exit ($tmp)
#   job_left JOB                 segments of job JOB left in /dev/shm
#   parts_from_args ARGS...      --part K/N, --list, --max-gpus R among ARGS
#   in_part I                    run number I belongs to this part
#   cli_run ...                  one `muster solve` run, checked (below)
#   part_done NAME T0            "# NAME part K/N: S s"
build=$(cd "$here/../.." && pwd)
muster="$build/bin/muster"
export MUSTER_PROVIDER_PATH="$build/lib/muster/providers"
export NCCL_NVLS_ENABLE=0
pass=0
fail=0

gpu_info() { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null; }
gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU'; }

field() { # field NAME JSON: the raw value of "NAME": (string quotes dropped)
  printf '%s' "$2" | sed -n "s/.*\"$1\":\(\"[^\"]*\"\|\[[^]]*\]\|[^,}]*\).*/\1/p" | tr -d '"[]'
}

# mp_libs DIR: unless MUSTER_MP_LIBDIR is set, unpack the wheel
# <build>/deps/nvidia_cusolvermp_cu13-*.whl into DIR/site and name its
# libraries in MUSTER_MP_LIBDIR (its metadata folder, on PYTHONPATH, tells
# the provider the version before CUDA starts).  NCCL comes from the
# machine's nvidia-nccl-cu13 wheel, found by the provider.
# mp_libs_temp: mp_libs into a new temporary folder, $tmp, removed at exit
# (the caller's EXIT trap).
mp_libs_temp() {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mp_libs "$tmp"
}

mp_libs() {
  [ -n "${MUSTER_MP_LIBDIR:-}" ] && return 0
  whl=$(ls "$build"/deps/nvidia_cusolvermp_cu13-*.whl 2>/dev/null | head -1)
  if [ -z "$whl" ]; then
    echo "# no wheel in $build/deps: cuSOLVERMp must be installed where the provider looks"
    return 0
  fi
  python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$whl" "$1/site"
  export MUSTER_MP_LIBDIR="$1/site/nvidia/cu13/lib"
  export PYTHONPATH="$1/site${PYTHONPATH:+:$PYTHONPATH}"
  echo "# cuSOLVERMp from $(basename "$whl")"
}

# job_left JOB: how many segments of job JOB and our uid, of any pid
# namespace, are in /dev/shm by name: shmdump's list (the runtime's parser,
# include/muster/segment.h; no copy of the naming here), its by-name rows
# ("by_name":true,"size":N,"owner_uid":U, in that order: print.c)
job_left() {
  "$build/bin/shmdump" --job "$1" --json |
    grep -o "\"by_name\":true,\"size\":[0-9]*,\"owner_uid\":$(id -u)," | wc -l
}

# parts_from_args ARGS...: part_k, part_n (--part K/N, else 1/1), listing
# (1 with --list: print what would run and its estimate, run nothing) and
# max_gpus (--max-gpus R, else empty) from the script's arguments.
parts_from_args() {
  part_k=1 part_n=1 listing=0 max_gpus=
  prev=
  for a in "$@"; do
    case $prev in
      --part)
        part_k=${a%/*} part_n=${a#*/}
        case "$a:$part_k:$part_n" in
          */*:[0-9]*:[0-9]*) ;;
          *) part_n=0 ;;
        esac
        case "$part_k$part_n" in *[!0-9]*) part_n=0 ;; esac
        if [ "$part_n" -lt 1 ] || [ "$part_n" -gt 64 ] || [ "$part_k" -lt 1 ] || [ "$part_k" -gt "$part_n" ]; then
          echo "--part '$a': K/N with 1 <= K <= N <= 64" >&2
          exit 2
        fi ;;
      --max-gpus) max_gpus=$a ;;
    esac
    [ "$a" = --list ] && listing=1
    prev=$a
  done
  return 0
}

in_part() { [ $(($1 % part_n)) -eq $((part_k - 1)) ]; }

part_done() { # part_done NAME T0
  echo "# $1 part $part_k/$part_n: $(($(date +%s) - $2)) s"
}

# cli_run COUNTED ENV PROVIDER ROUTINE DTYPE MODE RANKS N [options]: one
# `muster solve` (its residual check included: "ok":true) with the provider
# forced; ENV is "-" or NAME=value; COUNTED 0: printed, not counted.  Runs
# are numbered (cli_index) and dealt round-robin to the parts: a run not in
# this part is passed over; with listing=1 it is printed with its estimate
# (added to cli_est), not run.  With expect_refused=TEXT in its environment
# (`expect_refused=TEXT cli_run ...`) the run passes when it exits non-zero
# with TEXT on stderr (a refusal).  Uses seed, pass, fail.
cli_index=0
cli_est=0
cli_run() {
  counted=$1 envset=$2 prov=$3 routine=$4 dtype=$5 mode=$6 ranks=$7 nn=$8
  shift 8
  cli_index=$((cli_index + 1))
  in_part $((cli_index - 1)) || return 0
  if [ "$listing" = 1 ]; then
    # the cusolvermp estimate of gpu_select.c (a process per rank: CUDA,
    # NCCL, cuSOLVERMp); cusolverdn's a second a rank
    if [ "$prov" = cusolvermp ]; then est=$((2 + 4 * (ranks - 1))); else est=$((1 + ranks)); fi
    cli_est=$((cli_est + est))
    pre=
    [ "$envset" = - ] || pre="$envset "
    echo "${pre}muster solve $routine --provider $prov --dtype $dtype --mode $mode --ranks $ranks --n $nn $* (~${est}s)"
    return 0
  fi
  err=$(mktemp)
  # shellcheck disable=SC2086 # ${envset#-}: nothing, or one NAME=value
  out=$(env ${envset#-} timeout 180 "$muster" solve "$routine" --n "$nn" --dtype "$dtype" --mode "$mode" \
        --ranks "$ranks" --provider "$prov" --seed "$seed" --json "$@" 2>"$err")
  rc=$?
  got=$(field provider "$out") res=$(field residual "$out") secs=$(field seconds "$out") ok=$(field ok "$out")
  why=""
  if [ -n "${expect_refused:-}" ]; then # a refusal: non-zero exit, its reason on stderr
    [ "$rc" != 0 ] || why="exit 0"
    grep -qF "$expect_refused" "$err" || why="$why no '$expect_refused' on stderr"
  else
    [ "$rc" = 0 ] || why="exit $rc"
    [ "$got" = "$prov" ] || why="$why provider '$got'"
    [ "$ok" = true ] || why="$why ok '$ok'"
  fi
  if [ -z "$why" ]; then result=ok; else result="FAILED:$why"; fi
  if [ "$counted" = 1 ]; then
    if [ -z "$why" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  else
    result="(info) $result"
  fi
  printf '%-10s %-6s %-5s %-9s %-5s %-6s %-26s %-10s %-9s %s %s\n' "$prov" "$routine" "$dtype" "$mode" "$ranks" "$nn" \
    "$envset" "$res" "$secs" "$result" "$*"
  if [ -n "$why" ]; then
    [ -n "$out" ] && echo "    stdout: $(printf '%s' "$out" | cut -c1-400)"
    sed 's/^/    stderr: /' "$err" | head -8
  fi
  rm -f "$err"
}
cli_header() {
  printf '%-10s %-6s %-5s %-9s %-5s %-6s %-26s %-10s %-9s %s\n' provider routine dtype mode ranks n env residual \
    seconds result
}
