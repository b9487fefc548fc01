"""Version (include/muster.h) and requirements: numpy, plus the
muster-runtime wheel of the same version, which holds libmuster.so
(tools/wheels/pkgmeta.py).

Staged by tools/wheels/build.sh (muster_tf/lib/libmuster_tf.so and
muster_tf/_built_for.py beside this file): a platform wheel whose extras
[tensorflow-cpu] and [tensorflow] pin the TensorFlow it was built against.
TensorFlow is no hard requirement: either distribution provides it, and
one that named the other would make pip install a second TensorFlow;
`import muster_tf` checks the version instead.  From the source tree
(no libmuster_tf.so in the package): the Python package alone, libraries
from $MUSTER_LIB_DIR (docs/tensorflow.md).
"""
import pathlib
import runpy
import sys

from setuptools import setup

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(next(p for p in here.parents if (p / "tools/wheels/pkgmeta.py").exists())
                       / "tools" / "wheels"))
import pkgmeta  # noqa: E402

built = here / "muster_tf" / "_built_for.py"
if built.exists() and (here / "muster_tf" / "lib" / "libmuster_tf.so").exists():
    setup(**pkgmeta.adapter(["numpy"], package_data={"muster_tf": ["lib/libmuster_tf.so"]},
                            extras_require=pkgmeta.tensorflow_extras(runpy.run_path(str(built))["VERSION"]),
                            **pkgmeta.platform_wheel()))
else:
    setup(**pkgmeta.adapter(["numpy"]))
