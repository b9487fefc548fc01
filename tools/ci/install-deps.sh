#!/usr/bin/env bash
# tools/ci/install-deps.sh [--python]
# Installs what muster needs on a fresh Debian 12 / Ubuntu 22.04+ machine:
# the build (scons, gcc, liburcu, OpenBLAS + LAPACKE) and, with --python, a
# virtual environment build/venv with the adapters' test dependencies
# (numpy, pytest, jax for the CPU, tensorflow-cpu, and PyPI's torch run on the
# CPU without its CUDA wheels: see install_torch_cpu below).  The CUDA toolkit is
# optional: the cusolvermg provider is built only where nvcc is found.
set -euo pipefail
cd "$(dirname "$0")/../.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
pkgs="scons gcc g++ make pkg-config liburcu-dev libopenblas-dev liblapacke-dev python3 valgrind"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: apt-get install$missing"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

# PyPI's torch (Linux x86_64) needs ~2.3 GB of nvidia-* wheels that the CPU
# never uses (docs/testing.md, "PyTorch in CI"): install torch alone, its
# pure-Python dependencies, the three small CUDA runtime wheels it calls at
# import, and stand-ins for the other CUDA libraries.  If torch still cannot
# import and multiply, fall back to the full `pip install torch`.
torch_works() {
  "$1" -c 'import torch; assert float(torch.ones(3, dtype=torch.float64) @ torch.ones(3, dtype=torch.float64)) == 3.0' \
    >/dev/null 2>&1
}
install_torch_cpu() {
  local py=$1
  torch_works "$py" && return 0
  echo "install-deps: torch for the CPU (no nvidia-* wheels)"
  "$py" -m pip install -q --no-warn-conflicts --no-deps "torch>=2.4"
  "$py" -m pip install -q --no-warn-conflicts -r tools/ci/requirements-torch.txt
  local real
  real=$("$py" tools/ci/torch-cuda-stubs.py --deps)
  [ -z "$real" ] || "$py" -m pip install -q --no-warn-conflicts $real
  "$py" tools/ci/torch-cuda-stubs.py
  if ! torch_works "$py"; then
    echo "install-deps: torch does not import with stand-in CUDA libraries; installing it whole"
    "$py" tools/ci/torch-cuda-stubs.py --remove
    "$py" -m pip install -q torch
  fi
  torch_works "$py"
}

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
  install_torch_cpu build/venv/bin/python
fi
