#!/bin/sh
# tests/mpi/run-mpi-tests.sh [BUILD] - the MPI bootstrap under Open MPI's
# mpirun: mpi-comm-test on 1, 2, 3 and 4 ranks (as root on a small machine:
# --allow-run-as-root --oversubscribe).  Needs mpirun on PATH and a libmpi
# the runtime can dlopen (MUSTER_MPI_LIB to name one); exits 1 when any run
# fails.  BUILD: the build folder (default build).
set -eu
build=$(cd "${1:-build}" && pwd)
command -v mpirun >/dev/null || { echo "run-mpi-tests: mpirun not found" >&2; exit 1; }
dir=$(mktemp -d /tmp/muster-mpi.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/potrs"
ln -s "$build/tests/providers/testprov_coll2.so" "$dir/potrs/colltwo.so"
ln -s "$build/tests/providers/testprov_v1.so" "$dir/potrs/testprov.so"
export MUSTER_PROVIDER_PATH="$dir"
unset MUSTER_PROVIDER
root=
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
failed=0
for np in 1 2 3 4; do
  if out=$(timeout 120 mpirun $root --oversubscribe --mca btl self,tcp -np "$np" \
           -x MUSTER_PROVIDER_PATH "$build/tests/mpi-comm-test" 2>&1); then
    oks=$(printf '%s\n' "$out" | grep -c ' ok (openmpi)' || true)
    if [ "$oks" = "$np" ]; then echo "ok - $np ranks"; continue; fi
  fi
  echo "not ok - $np ranks:"; printf '%s\n' "$out" | sed 's/^/    /'
  failed=1
done
exit $failed
