"""Version (include/muster.h) and requirements: the framework's, plus the
muster-runtime wheel of the same version, which holds the libraries
(tools/wheels/pkgmeta.py)."""
import pathlib
import sys

from setuptools import setup

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(next(p for p in here.parents if (p / "tools/wheels/pkgmeta.py").exists())
                       / "tools" / "wheels"))
import pkgmeta  # noqa: E402

setup(**pkgmeta.adapter(["tensorflow>=2.16", "numpy"]))
