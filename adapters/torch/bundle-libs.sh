#!/bin/sh
# Copy a build's libraries into muster_torch/lib so `pip install adapters/torch`
# carries them.  usage: adapters/torch/bundle-libs.sh [BUILD_DIR]   (default build)
# muster_torch has no library of its own: libmuster.so is its "adapter library".
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../tools/bundle-adapter-libs.sh" "$here/muster_torch/lib" libmuster.so "${1:-build}"
