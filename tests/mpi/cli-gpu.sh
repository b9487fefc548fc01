# shellcheck shell=bash disable=SC2154 # rc, out, err: cli.sh's run
# tests/mpi/cli-gpu.sh - sourced by tests/mpi/cli.sh (its MPIRUN, MUSTER,
# BUILD, PROV, run, ok, bad, out, err, pass, fail): `muster solve --launcher
# mpi` in GPU mode (a provider of CUDA memory only, as cusolvermp) on a
# machine without a GPU; the GPU runs themselves are docs/multinode.md's.
#
#   unavailable  --provider cusolvermp on 2 ranks: exit 1, rank 0 and rank 1
#                each print the provider's reason (its probe's, as `muster
#                providers` says it; where it is not built, the runtime's
#                "not found" naming it)
#   host         --devices with a host provider (scalapack): accepted and
#                ignored ("mem":"host", devices -1)
#   fake         the stand-in CUDA runtime (tests/providers/fakecudart.c, 2
#                "GPUs" of malloc'ed memory) and collcuda (a collective test
#                provider of CUDA memory, chosen as cusolvermp would be): 3
#                ranks on GPUs 0,1,0 (their local ranks: here from the host
#                names, the launcher's variable removed), 1,0,1 with
#                --devices 1,0 (local rank l on LIST[l % 2]); JSON "mem":"cuda";
#                the provider's markers came back to the host (a finite
#                residual: the check fails, exit 1, but no error)
#   fail         no GPU at all, a --devices GPU that is not there for rank 1,
#                a copy to rank 1's GPU failing: exit 1 within 10 s, rank 0
#                and rank 1 both print the failing rank's words (rank, pid,
#                host, GPU)
#   shm          nothing of these runs left in /dev/shm
# About 10 s on the 2-core CI VM.

host=$(hostname)
shm_before=$(ls -A /dev/shm | sort)
gpu_prov=$(mktemp -d /tmp/muster-cli-gpu.XXXXXX)
mkdir -p "$gpu_prov/mp/potrs" "$gpu_prov/fake"
[ -e "$PWD/$BUILD/lib/muster/providers/cusolvermp.so" ] &&
  ln -s "$PWD/$BUILD/lib/muster/providers/cusolvermp.so" "$gpu_prov/mp/potrs/cusolvermp.so"
ln -s "$PWD/$BUILD/lib/muster/providers/scalapack.so" "$gpu_prov/mp/potrs/scalapack.so"
for r in potrs potri syevd; do
  mkdir -p "$gpu_prov/fake/$r"
  ln -s "$PWD/$BUILD/tests/providers/testprov_collcuda2.so" "$gpu_prov/fake/$r/collcuda.so"
  ln -s "$PWD/$BUILD/lib/muster/providers/scalapack.so" "$gpu_prov/fake/$r/scalapack.so"
done

# unavailable: every rank says why, in the provider's own words
if [ -e "$gpu_prov/mp/potrs/cusolvermp.so" ]; then
  why=$(MUSTER_PROVIDER_PATH=$gpu_prov/mp "$MUSTER" providers | awk '$1 == "cusolvermp"' | sed 's/.*unavailable: //')
  want="provider 'cusolvermp' ([^)]*, CUDA memory only) cannot run here: "
else
  why="'cusolvermp'" want=
fi
# shellcheck disable=SC2086
MUSTER_PROVIDER_PATH=$gpu_prov/mp run 60 $MPIRUN -np 2 "$MUSTER" solve potrs --launcher mpi --n 64 \
  --provider cusolvermp
if [ "$rc" = 1 ] && [ -n "$why" ] && [ ! -s "$out" ] &&
  grep "^muster solve: rank 1 of 2 (pid [0-9]* on $host): .*$want" "$err" | grep -qF "$why" &&
  grep "^muster solve: potrs f64 n=64 ranks=2 mode=mpi: .*$want" "$err" | grep -qF "$why"; then
  ok "gpu unavailable: --provider cusolvermp, exit 1, every rank gives its reason ($why)"
else
  bad "gpu unavailable: exit $rc, want 1 and '$why' from rank 0 and rank 1"
fi

# host: --devices is for GPU mode; a host provider ignores it
# shellcheck disable=SC2086
run 60 $MPIRUN -np 2 "$MUSTER" solve potrs --launcher mpi --n 64 --devices 0 --json
if [ "$rc" = 0 ] && grep -q '"provider":"scalapack","mem":"host","devices":\[-1,-1\]' "$out" &&
  grep -q '"ok":true' "$out"; then
  ok "gpu host: --devices with a host provider, ignored"
else
  bad "gpu host: exit $rc"
fi

# fake: the pieces go to the ranks' "GPUs" and back
fake_env() { # fake_env CMD...: CMD under the stand-in CUDA runtime and collcuda
  MUSTER_PROVIDER_PATH=$gpu_prov/fake LD_LIBRARY_PATH=$PWD/$BUILD/tests/providers/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$@"
}
MPIRUN_FAKE="$MPIRUN -x LD_LIBRARY_PATH -x FAKECUDA_COUNT -x FAKECUDA_FAIL_MEMCPY"
export FAKECUDA_COUNT=2 FAKECUDA_FAIL_MEMCPY=-1
# shellcheck disable=SC2086
fake_env run 60 $MPIRUN_FAKE -np 3 env -u OMPI_COMM_WORLD_LOCAL_RANK "$MUSTER" solve potrs --launcher mpi --n 64 --json
if [ "$rc" = 1 ] && grep -q '"provider":"collcuda","mem":"cuda","devices":\[0,1,0\]' "$out" &&
  grep -Eq '"residual":[0-9]' "$out" && grep -q '"ranks_agree":true,"ok":false}' "$out" &&
  ! grep -q '"error"' "$out"; then
  ok "gpu fake: 3 ranks on GPUs 0,1,0 by host name, the results back from them"
else
  bad "gpu fake: exit $rc"
fi
# shellcheck disable=SC2086
fake_env run 60 $MPIRUN_FAKE -np 3 "$MUSTER" solve syevd --launcher mpi --n 64 --devices 1,0
line="^syevd f64 n=64 nrhs=1 ranks=3 mode=mpi provider=collcuda tile=[0-9]+ seed=[0-9]+ mem=cuda devices=1,0,1$"
if [ "$rc" = 1 ] && grep -Eq "$line" "$out" && grep -Eq '^  residual  [0-9]' "$out" && ! grep -q '^muster' "$err"; then
  ok "gpu fake: --devices 1,0 by local rank"
else
  bad "gpu fake --devices: exit $rc"
fi

# fail: fake_fail NAME WORDS [VAR=V] ARGS...: exit 1 within 10 s, WORDS
# (a regular expression) from rank 0 and rank 1
fake_fail() {
  local name=$1 words=$2 t0=$SECONDS
  shift 2
  # shellcheck disable=SC2086
  fake_env run 60 env "$@"
  if [ "$rc" = 1 ] && [ $((SECONDS - t0)) -le 10 ] &&
    grep -Eq "^muster solve: rank 1 of 2 \(pid [0-9]+ on $host\): CUDA error: $words" "$err" &&
    grep -Eq "^muster solve: potri f64 n=64 ranks=2 mode=mpi: CUDA error: $words" "$err"; then
    ok "gpu fail $name: exit 1, every rank names the failing one"
  else
    bad "gpu fail $name: exit $rc after $((SECONDS - t0)) s, want 1 and /$words/"
  fi
}
solve=(solve potri --launcher mpi --n 64)
# shellcheck disable=SC2086
fake_fail "no GPU" "rank 0 \(pid [0-9]+ on $host\): no GPU for it \(local rank 0\): no CUDA device \(cudaGetDeviceCount gave 0\)$" \
  FAKECUDA_COUNT=0 $MPIRUN_FAKE -np 2 "$MUSTER" "${solve[@]}"
# shellcheck disable=SC2086
fake_fail "--devices" "rank 1 \(pid [0-9]+ on $host\): no GPU for it \(local rank 1\): GPU 7 does not exist \(cudaGetDeviceCount gave 2\)$" \
  $MPIRUN_FAKE -np 2 "$MUSTER" "${solve[@]}" --devices 0,7
# shellcheck disable=SC2086
fake_fail "copy" "rank 1 \(pid [0-9]+ on $host\), GPU 1: copying its piece to the GPU: cudaMemcpy\(" \
  FAKECUDA_FAIL_MEMCPY=1 $MPIRUN_FAKE -np 2 "$MUSTER" "${solve[@]}"
unset FAKECUDA_COUNT FAKECUDA_FAIL_MEMCPY

left=$(comm -13 <(echo "$shm_before") <(ls -A /dev/shm | sort))
if [ -z "$left" ]; then
  ok "gpu shm: nothing left in /dev/shm"
else
  bad "gpu shm: left in /dev/shm: $left"
fi
rm -rf "$gpu_prov"
