#!/bin/sh
# Copy a build's libraries into muster_jax/lib so `pip install adapters/jax`
# carries them: libmuster_jax.so, libmuster.so, the liburcu copies and the
# providers.  usage: adapters/jax/bundle-libs.sh [BUILD_DIR]   (default build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
src=$(cd "$build/lib" && pwd)
dst=$here/muster_jax/lib
[ -f "$src/libmuster_jax.so" ] || { echo "no $src/libmuster_jax.so: run scons first" >&2; exit 1; }
rm -rf "$dst"
mkdir -p "$dst/muster"
cp "$src"/libmuster.so "$src"/libmuster_jax.so "$dst"/
# liburcu: the build's copies, or the system's (a build folder may hold only
# symlinks to them); dereferenced, so the package runs where liburcu is absent
for l in liburcu-bp.so.8 liburcu-cds.so.8 liburcu-common.so.8; do
  for d in "$src" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    if [ -e "$d/$l" ]; then cp -L "$d/$l" "$dst/$l"; break; fi
  done
done
cp -a "$src/muster/providers" "$dst/muster/"
echo "bundled $src into $dst"
