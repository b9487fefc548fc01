#!/bin/sh
# Copy a build's libraries into an adapter package's lib/ folder so that
# `pip install adapters/<framework>` carries them: the adapter's own library,
# libmuster.so, the liburcu copies (dereferenced, so the package runs where
# liburcu is absent) and the providers.  Called by each adapter's
# bundle-libs.sh:
#     tools/bundle-adapter-libs.sh DEST_LIB_DIR ADAPTER_LIB [BUILD_DIR]
# ADAPTER_LIB is libmuster.so itself for an adapter without a library of its
# own (muster_torch).
set -eu
dst=$1
adapter=$2
build=${3:-build}
src=$(cd "$build/lib" && pwd)
[ -f "$src/$adapter" ] || { echo "no $src/$adapter: run scons first (with the framework installed)" >&2; exit 1; }
rm -rf "$dst"
mkdir -p "$dst/muster"
cp "$src/libmuster.so" "$dst/"
[ "$adapter" = libmuster.so ] || cp "$src/$adapter" "$dst/"
for l in liburcu-bp.so.8 liburcu-cds.so.8 liburcu-common.so.8; do
  for d in "$src" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    if [ -e "$d/$l" ]; then cp -L "$d/$l" "$dst/$l"; break; fi
  done
done
cp -a "$src/muster/providers" "$dst/muster/"
echo "bundled $src into $dst"
