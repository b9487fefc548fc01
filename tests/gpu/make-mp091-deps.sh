#!/bin/sh
# tests/gpu/make-mp091-deps.sh BUILD NCCL_SO WHEELS - on the CPU machine:
# pack cuSOLVERMp 0.9.1, cuBLASMp 0.10 and an NCCL new enough for them into
# BUILD/deps091/mp091.tar.xz, small enough to travel to the GPU machines
# (docs/gpu-scripts.md "cuSOLVERMp 0.9.1"; run-mp091-tests.sh unpacks it).
#   NCCL_SO  a libnccl.so.2 >= 2.29 (NVIDIA's wheels are 201 MB and more:
#            build one for the GPU machines' sm_90 alone from NCCL's source
#            with build-nccl091.sh NCCL_SRC OUT, and name OUT/lib/libnccl.so.2)
#   WHEELS   a folder with nvidia_cusolvermp_cu13-0.9.1*.whl and
#            nvidia_cublasmp_cu13-0.10*.whl (`python3 -m pip download --no-deps
#            nvidia-cusolvermp-cu13==0.9.1.9318.post1 nvidia-cublasmp-cu13==0.10.0.3695`)
# The archive holds one site folder as the wheels lay it out, so the
# provider reads each library's version from its metadata folder
# (providers/cusolvermp/search.h): site/nvidia/cu13/lib/libcusolverMp.so.0,
# site/nvidia/cublasmp/cu13/lib/libcublasmp.so.0, their *.dist-info/METADATA,
# and site/nvidia/nccl/lib/libnccl.so.2 (debug sections stripped).
set -eu
[ $# = 3 ] || { echo "usage: make-mp091-deps.sh BUILD NCCL_SO WHEELS" >&2; exit 2; }
build=$1 nccl=$2 wheels=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# unzip WHEEL: its libraries and its METADATA into $tmp/site
unzip_wheel() {
  python3 - "$1" "$tmp/site" <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for name in z.namelist():
    if ".so" in name.rsplit("/", 1)[-1] or name.endswith(".dist-info/METADATA"):
        z.extract(name, sys.argv[2])
EOF
}
for pat in "nvidia_cusolvermp_cu13-0.9.1*.whl" "nvidia_cublasmp_cu13-0.10.*.whl"; do
  # shellcheck disable=SC2086 # the pattern is meant to expand
  whl=$(ls "$wheels"/$pat 2>/dev/null | head -1)
  [ -n "$whl" ] || { echo "no $pat in $wheels" >&2; exit 1; }
  unzip_wheel "$whl"
done
mkdir -p "$tmp/site/nvidia/nccl/lib"
cp -L "$nccl" "$tmp/site/nvidia/nccl/lib/libnccl.so.2"
strip --strip-debug "$tmp/site/nvidia/nccl/lib/libnccl.so.2"
mkdir -p "$build/deps091"
tar -C "$tmp" -cf - site | xz -9 -T2 > "$build/deps091/mp091.tar.xz"
ls -l "$build/deps091/mp091.tar.xz"
(cd "$tmp" && find site -type f -exec ls -l {} \;)
