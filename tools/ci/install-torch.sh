#!/usr/bin/env bash
# tools/ci/install-torch.sh [VENV]
# A virtual environment (default build/venv-torch) with PyPI's torch and the
# muster_torch tests' dependencies (tools/ci/requirements-torch.txt), for
# tests/python/torch.  Does nothing when VENV's torch already imports.
#
# Why a plain `pip install torch`, CUDA wheels and all: PyPI's torch for
# Linux x86_64 is the CUDA build, and download.pytorch.org (where the
# CPU-only build lives) is not reachable from CI.  Its nvidia-* and triton
# wheels are never used on a CPU, but skipping them means installing torch
# with --no-deps and writing stand-in CUDA libraries for the ones its own
# libraries link to: fragile (every torch release links a different set)
# and hard to follow.  Measured on the 2-core CI-like machine (docs/torch.md,
# "Tests and their cost in CI"): 2.8 GiB to download, 114-132 s to download
# and install, 5.4 GiB on disk; the CI budget affords it.
# --no-cache-dir: pip's cache would keep a second copy of the 2.8 GB.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=${1:-build/venv-torch}

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
apt_install() { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"; }

# torch.compile's default backend (inductor) compiles C++ for the CPU that
# includes Python.h (test_torch_grad.py::test_compile_potrs)
if ! python3 -c 'import os, sysconfig; assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' \
     2>/dev/null; then
  apt_install python3-dev
fi
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, pytest' 2>/dev/null; then
  exit 0
fi
mkdir -p "$(dirname "$venv")"
if ! python3 -m venv "$venv" 2>/dev/null; then
  apt_install python3-venv
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --no-cache-dir --upgrade pip
"$venv/bin/python" -m pip install -q --no-cache-dir -r tools/ci/requirements-torch.txt
