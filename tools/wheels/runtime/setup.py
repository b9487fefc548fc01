"""Version (include/muster.h), the platform tag and the [cuda13] extra
(tools/wheels/pkgmeta.py: one home for each)."""
import pathlib
import sys

from setuptools import setup

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(next(p for p in here.parents if (p / "tools/wheels/pkgmeta.py").exists())
                       / "tools" / "wheels"))
import pkgmeta  # noqa: E402

setup(version=pkgmeta.version(), extras_require={"cuda13": pkgmeta.CUDA13},
      **pkgmeta.platform_wheel())
