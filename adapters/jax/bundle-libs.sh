#!/bin/sh
# Copy a build's libraries into muster_jax/lib so `pip install adapters/jax`
# carries them.  usage: adapters/jax/bundle-libs.sh [BUILD_DIR]   (default build)
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../tools/bundle-adapter-libs.sh" "$here/muster_jax/lib" libmuster_jax.so "${1:-build}"
