#!/bin/sh
# Copy a build's libraries into muster_tf/lib so `pip install adapters/tensorflow`
# carries them: libmuster_tf.so, libmuster.so, the liburcu copies and the
# providers.  usage: adapters/tensorflow/bundle-libs.sh [BUILD_DIR]   (default build)
# libmuster_tf.so works with the TensorFlow it was built against only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
src=$(cd "$build/lib" && pwd)
dst=$here/muster_tf/lib
[ -f "$src/libmuster_tf.so" ] || { echo "no $src/libmuster_tf.so: run scons where tensorflow is installed" >&2; exit 1; }
rm -rf "$dst"
mkdir -p "$dst/muster"
cp "$src"/libmuster.so "$src"/libmuster_tf.so "$dst"/
# liburcu: dereferenced copies, so the package runs where liburcu is absent
for l in liburcu-bp.so.8 liburcu-cds.so.8 liburcu-common.so.8; do
  for d in "$src" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    if [ -e "$d/$l" ]; then cp -L "$d/$l" "$dst/$l"; break; fi
  done
done
cp -a "$src/muster/providers" "$dst/muster/"
echo "bundled $src into $dst"
