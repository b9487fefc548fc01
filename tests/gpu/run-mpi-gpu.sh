#!/bin/bash
# tests/gpu/run-mpi-gpu.sh - `mpirun ... muster solve --launcher mpi
# --provider cusolvermp` on GPUs, and the "two hosts on one machine" runs
# with NCCL forced onto TCP sockets (docs/multinode.md, issue 24 items 2
# and 5).  From the repo root (the JAX test and tests/mpi/hosts.sh are read
# from the source tree), with a build folder carried to a GPU machine (bin,
# lib, tests, deps: the cuSOLVERMp wheel), as root, on 4 GPUs (2 are enough
# for all but the 4-rank cases, which are then skipped):
#     bash build/tests/gpu/run-mpi-gpu.sh   (or tests/gpu/run-mpi-gpu.sh: build/ then)
# Environment: MN (matrix order, default 1001), BUDGET (seconds, default
# 180), MPI_EXTRA (more mpirun options), PYTHON (default python3, with jax
# and pytest), NGPU (pretend that many GPUs; without a GPU the check below
# stops the run, cusolvermp not loading).
# First one check that cusolvermp loads (`muster providers`): where it does
# not (no cuSOLVERMp wheel in <build>/deps and no MUSTER_MP_LIBDIR), one
# line "mpigpu: not run: cusolvermp does not load (REASON); ..." saying how
# to give it the libraries, and exit 1 (no case run; MUSTER_MP_LIBDIR is
# passed on only when set).
# Steps (each under timeout -k 5; the whole about 3 minutes on 4 x H200):
#   1. CLI under mpirun, cusolvermp in GPU mode: potrs, syevd, getrs, gels
#      x f64, c64, n = 1001 (divisible by neither 2 nor 4), on 2 and 4
#      ranks: exit 0, rank 0's JSON "provider":"cusolvermp","mem":"cuda",
#      devices 0..R-1 (the local ranks), "ranks_agree":true, "ok":true (the
#      residual check); gels on >1 process passes also when cuSOLVERMp 0.8
#      refuses it on every rank as documented (docs/providers/cusolvermp.md), said so;
#   2. "two hosts": potrs and syevd on 2 and 4 ranks with NCCL on TCP
#      sockets over lo (P2P and SHM off, NCCL_NET=Socket), NCCL's log in
#      files: passes only when it says "via NET/Socket" and never via P2P
#      or SHM; then the JAX store-bootstrap GPU test alone
#      (test_store_distributed.py -k bootstrap_over_nccl: 2 processes,
#      potrs, getrs, syevd on cusolvermp; 120 s limit) under the same
#      variables, the same proof from its NCCL log;
#   3. (informational, not counted) a real two-host form: two network
#      namespaces joined by a veth pair (tests/mpi/hosts.sh), 2 ranks each
#      on 4 GPUs or more (hostB on GPUs 2,3), 1 each on 2 or 3 (hostB on
#      GPU 1), potrs over NCCL sockets on the veth link; not tried, it
#      says which need is missing (2 GPUs, tests/mpi/hosts.sh, `ip`);
#   4. nothing of ours left in /dev/shm.
# Prints "ok - ..." / "not ok - ..." per case, "# info ..." for step 3,
# "skip - ..." for a case not started (too few GPUs, or the run passed
# BUDGET s), and "mpigpu: P passed, F failed, S skipped"; exit 1 on any
# failure.  Order: step 1 in f64, step 2, step 1 in c64, step 3.
set -u
repo=$PWD
self=$(cd "$(dirname "$0")" && pwd)
if [ -x "$self/../../bin/muster" ]; then here=$self; else here=$repo/build/tests/gpu; fi
. "$here/gpu-env.sh" # build, muster, MUSTER_PROVIDER_PATH, NCCL_NVLS_ENABLE=0, mp_libs, gpu_*, field
T0=$(date +%s)
N=${MN:-1001}
tmp=$(mktemp -d /tmp/mpigpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mp_libs "$tmp"
export PYTHONPATH=${PYTHONPATH:-} LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
# MUSTER_MP_LIBDIR only when it names something: set but empty, the
# provider refuses to load ("MUSTER_MP_LIBDIR is set but empty")
mpx=""
if [ -n "${MUSTER_MP_LIBDIR:-}" ]; then export MUSTER_MP_LIBDIR; mpx="-x MUSTER_MP_LIBDIR"; else unset MUSTER_MP_LIBDIR; fi
export MUSTER_TIMEOUT=${MUSTER_TIMEOUT:-60}
unset MUSTER_PROVIDER
gpu_info
ngpu=${NGPU:-$(gpu_count)} # NGPU: pretend that many
echo "# GPUs: $ngpu; n=$N; $(mpirun --version 2>&1 | head -1)"
# one check before the cases: cusolvermp loads here (its probe's answer in
# `muster providers`), else every case would fail alike, one by one
all=$("$muster" providers 2>&1)
listing=$(echo "$all" | grep -A1 '^cusolvermp ')
echo "$listing"
case $(echo "$listing" | head -1) in
  *" unavailable: "*) why=$(echo "$listing" | head -1 | sed 's/.* unavailable: //') ;;
  *" available"*) why="" ;;
  *) why="\`muster providers\` lists no cusolvermp from $MUSTER_PROVIDER_PATH: $(echo "$all" | tail -1)" ;;
esac
if [ -n "$why" ]; then
  echo "mpigpu: not run: cusolvermp does not load ($why); give it cuSOLVERMp: the 0.8 wheel" \
    "(nvidia_cusolvermp_cu13-*.whl) in $build/deps, or MUSTER_MP_LIBDIR (and LD_PRELOAD of its NCCL) from" \
    "build/deps091 as tools/gpu/batch.sh's use091 sets them"
  exit 1
fi
shm0=$(ls -A /dev/shm | sort)
MPI="mpirun --allow-run-as-root --oversubscribe --bind-to none ${MPI_EXTRA:-} -x MUSTER_PROVIDER_PATH
  $mpx -x PYTHONPATH -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x MUSTER_TIMEOUT -x PATH"
SOCK_VARS="NCCL_P2P_DISABLE NCCL_SHM_DISABLE NCCL_NET NCCL_SOCKET_IFNAME NCCL_DEBUG NCCL_DEBUG_FILE"

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
show() { # the tails of a failed run's outputs
  tail -c 1500 "$tmp/out" | sed 's/^/    out: /'
  grep -v 'NCCL INFO' "$tmp/err" | tail -15 | sed 's/^/    err: /'
}

# over_budget WHAT: past BUDGET seconds (default 180) since the start, WHAT
# is not run: printed and counted as skipped (the lead's 4-minute slot)
skipped=0
over_budget() {
  [ $(($(date +%s) - T0)) -gt "${BUDGET:-180}" ] || return 1
  skipped=$((skipped + 1))
  echo "skip - $* (past ${BUDGET:-180} s)"
}

# cli NP LIMIT LABEL ROUTINE DTYPE [options]: one mpirun job, checked
cli() {
  local np=$1 limit=$2 label=$3 routine=$4 dtype=$5 t=$SECONDS
  shift 5
  over_budget "$label $routine $dtype np=$np" && return
  if [ "$np" -gt "$ngpu" ]; then
    skipped=$((skipped + 1))
    echo "skip - $label $routine $dtype np=$np: only $ngpu GPU(s)"
    return
  fi
  # shellcheck disable=SC2086
  timeout -k 5 "$limit" $MPI -np "$np" "$muster" solve "$routine" --launcher mpi --provider cusolvermp \
    --n "$N" --dtype "$dtype" --json "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? js
  js=$(grep '^{"routine"' "$tmp/out" | tail -1)
  local devs want="" res secs
  devs=$(field devices "$js") res=$(field residual "$js") secs=$(field seconds "$js")
  for ((r = 0; r < np; r++)); do want="$want${want:+,}$r"; done
  local what="$label $routine $dtype np=$np ($((SECONDS - t)) s wall, solve ${secs:-?} s, residual ${res:-?})"
  if [ "$rc" = 0 ] && [ "$(field provider "$js")" = cusolvermp ] && [ "$(field mem "$js")" = cuda ] &&
    [ "$devs" = "$want" ] && [ "$(field ranks "$js")" = "$np" ] && [ "$(field ranks_agree "$js")" = true ] &&
    [ "$(field ok "$js")" = true ]; then
    ok "$what"
  elif [ "$routine" = gels ] && [ "$np" -gt 1 ] && [ "$rc" != 0 ] &&
    grep -q "gels on $np processes: cuSOLVERMp .*'s QR is not known right there" "$tmp/err" &&
    grep -q "^muster solve: rank 1 of $np " "$tmp/err"; then
    ok "$label gels $dtype np=$np: refused on every rank as documented ($(grep -o 'cuSOLVERMp [0-9.]*' "$tmp/err" | head -1))"
  else
    bad "$what: exit $rc, devices [$devs] want [$want]"
    show
  fi
}

# nccl_net LABEL DIR: NCCL's logs in DIR say the transport was NET/Socket,
# never P2P or SHM
nccl_net() {
  local n p s
  n=$(cat "$2"/nccl.* 2>/dev/null | grep -c 'via NET/Socket')
  p=$(cat "$2"/nccl.* 2>/dev/null | grep -Ec 'via (P2P|SHM)')
  s=$(cat "$2"/nccl.* 2>/dev/null | grep -m1 'via NET/Socket' | sed 's/.*NCCL INFO //')
  if [ "$n" -gt 0 ] && [ "$p" = 0 ]; then
    ok "$1: NCCL connected via NET/Socket ($n lines in $(ls "$2" | wc -l) logs, e.g. '$s'), never P2P/SHM"
  else
    bad "$1: NCCL's logs: $n 'via NET/Socket' lines, $p via P2P/SHM"
    grep -h 'via \|NET/\|WARN' "$2"/nccl.* 2>/dev/null | head -10 | sed 's/^/    nccl: /'
  fi
}

sockets() { # the variables that force NCCL onto TCP over lo, its log into $1
  export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=${SOCK_IF:-lo} \
    NCCL_DEBUG=INFO NCCL_DEBUG_FILE=$1/nccl.%h.%p
}

pass=0 fail=0
routines() { # routines DTYPE: step 1's four runs on 2 and 4 ranks
  for np in 2 4; do
    cli "$np" 60 cli potrs "$1" --nrhs 3
    cli "$np" 60 cli syevd "$1"
    cli "$np" 60 cli getrs "$1" --nrhs 2
    cli "$np" 60 cli gels "$1" --nrhs 2
  done
}
echo "# 1. mpirun -np R muster solve --launcher mpi --provider cusolvermp (GPU mode), f64 (c64 after step 2)"
routines f64
echo "# step 1 f64: $(($(date +%s) - T0)) s"

echo "# 2. two hosts on one machine: NCCL on TCP sockets (lo), P2P and SHM off"
for np in 2 4; do
  for routine in potrs syevd; do
    d=$tmp/nccl-$routine-$np
    mkdir -p "$d"
    (
      sockets "$d"
      MPI="$MPI $(printf -- '-x %s ' $SOCK_VARS)"
      cli "$np" 90 sockets "$routine" f64
      echo "$pass $fail $skipped" >"$tmp/count"
    )
    read -r pass fail skipped0 <"$tmp/count"
    [ "$skipped0" = "$skipped" ] || { skipped=$skipped0; continue; }
    nccl_net "sockets $routine np=$np" "$d"
  done
done
d=$tmp/nccl-jax
mkdir -p "$d"
t=$SECONDS
JAX_LIMIT=120
jaxtest=$repo/tests/python/jax/test_store_distributed.py
if [ ! -f "$jaxtest" ]; then
  skipped=$((skipped + 1))
  echo "skip - sockets jax store bootstrap: no $jaxtest (run from the repo root)"
fi
[ ! -f "$jaxtest" ] || over_budget "sockets jax store bootstrap" ||
(
  sockets "$d"
  export MUSTER_BUILD=$build MUSTER_LIB_DIR=$build/lib XLA_PYTHON_CLIENT_PREALLOCATE=false
  export PYTHONPATH="$repo/adapters/jax${PYTHONPATH:+:$PYTHONPATH}" MUSTER_TIMEOUT=20
  # the one narrow test (2 processes: potrs, getrs, syevd on cusolvermp, its
  # workers cut at 90 s with their stacks shown); -k gpu is the whole GPU suite
  MUSTER_TEST_GPUS=2 timeout -k 5 "$JAX_LIMIT" "${PYTHON:-python3}" -m pytest -q -rfE -p no:cacheprovider \
    "$jaxtest" -k bootstrap_over_nccl >"$tmp/jax.log" 2>&1
)
rc=$?
if [ ! -e "$tmp/jax.log" ]; then
  :
elif [ "$rc" = 0 ] && grep -q '1 passed' "$tmp/jax.log"; then
  ok "sockets jax store bootstrap (2 processes, cusolvermp): $(tail -1 "$tmp/jax.log")" \
    "($((SECONDS - t)) s of its $JAX_LIMIT s limit)"
else
  bad "sockets jax store bootstrap: exit $rc ($((SECONDS - t)) s, limit $JAX_LIMIT s)"
  tail -30 "$tmp/jax.log" | sed 's/^/    /'
fi
[ -e "$tmp/jax.log" ] && nccl_net "sockets jax" "$d"
echo "# step 2: $(($(date +%s) - T0)) s"

echo "# 1 (continued). c64"
routines c64
echo "# step 1 c64: $(($(date +%s) - T0)) s"

echo "# 3. (informational) two network namespaces joined by a veth pair, NCCL sockets on it"
if over_budget "two namespaces"; then
  :
elif [ "$ngpu" -ge 2 ] && [ -f "$repo/tests/mpi/hosts.sh" ] && command -v ip >/dev/null; then
  (
    fail() { echo "# info: two-namespace form not possible here: $*"; exit 3; }
    # 2 ranks a host on 4 GPUs or more, 1 on 2 or 3
    HOSTS_SLOTS=$((ngpu >= 4 ? 2 : 1))
    . "$repo/tests/mpi/hosts.sh" # $WORK, "$WORK/host", $HOSTS_MPIRUN, cleanup at exit
    # hostB's ranks on the GPUs after hostA's (its local ranks would otherwise share hostA's)
    if [ "$HOSTS_SLOTS" = 2 ]; then visA=0,1 visB=2,3; else visA=0 visB=1; fi
    sed -i "s|exec \"$WORK/host\" hostB|exec env CUDA_VISIBLE_DEVICES=$visB \"$WORK/host\" hostB|" "$WORK/agent"
    d=$WORK/nccl
    mkdir -p "$d"
    chmod 777 "$d"
    x=""
    for v in MUSTER_PROVIDER_PATH MUSTER_MP_LIBDIR PYTHONPATH LD_LIBRARY_PATH; do
      [ -z "${!v:-}" ] || x="$x -x $v=${!v}"
    done
    cmd="CUDA_VISIBLE_DEVICES=$visA $HOSTS_MPIRUN $x -x NCCL_NVLS_ENABLE=0 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 \
      -x NCCL_NET=Socket -x NCCL_SOCKET_IFNAME=mv -x NCCL_DEBUG=INFO -x NCCL_DEBUG_FILE=$d/nccl.%h.%p \
      -x MUSTER_TIMEOUT=30 $muster solve potrs --launcher mpi --provider cusolvermp --n $N --json"
    timeout -k 5 60 "$WORK/host" hostA "$NSA" "$cmd" >"$WORK/job.log" 2>&1
    rc=$?
    js=$(grep '^{"routine"' "$WORK/job.log" | tail -1)
    echo "# info: two namespaces: exit $rc; $js"
    grep -v 'NCCL INFO' "$WORK/job.log" | grep -v '^{' | tail -8 | sed 's/^/#   /'
    echo "# info: NCCL logs from: $(ls "$d" 2>/dev/null | tr '\n' ' ')"
    echo "# info: NCCL: $(cat "$d"/nccl.* 2>/dev/null | grep -c 'via NET/Socket') 'via NET/Socket' lines," \
      "$(cat "$d"/nccl.* 2>/dev/null | grep -Ec 'via (P2P|SHM)') via P2P/SHM; e.g." \
      "$(cat "$d"/nccl.* 2>/dev/null | grep -m1 'via NET/Socket' | sed 's/.*NCCL INFO //')"
    [ "$rc" = 0 ] && [ "$(field ok "$js")" = true ] && echo "# info: two namespaces: WORKS" ||
      echo "# info: two namespaces: did not pass (not counted)"
  )
else # which of its needs is missing, so that the next run's log says
  why=""
  [ "$ngpu" -ge 2 ] || why="only $ngpu GPU(s), needs 2"
  [ -f "$repo/tests/mpi/hosts.sh" ] || why="${why:+$why; }no $repo/tests/mpi/hosts.sh (run from the repo root)"
  command -v ip >/dev/null || why="${why:+$why; }no ip command (iproute2 not installed)"
  echo "# info: two-namespace form not tried: $why"
fi
echo "# step 3: $(($(date +%s) - T0)) s"

left=$(comm -13 <(echo "$shm0") <(ls -A /dev/shm | sort))
if [ -z "$left" ]; then ok "nothing left in /dev/shm"; else bad "left in /dev/shm: $left"; fi
echo "mpigpu: $pass passed, $fail failed, $skipped skipped ($(($(date +%s) - T0)) s)"
[ "$fail" = 0 ]
