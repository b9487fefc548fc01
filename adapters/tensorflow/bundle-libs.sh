#!/bin/sh
# Copy a build's libraries into muster_tf/lib so `pip install adapters/tensorflow`
# carries them.  usage: adapters/tensorflow/bundle-libs.sh [BUILD_DIR]   (default build)
# libmuster_tf.so works with the TensorFlow it was built against only.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../tools/bundle-adapter-libs.sh" "$here/muster_tf/lib" libmuster_tf.so "${1:-build}"
