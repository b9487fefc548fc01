"""muster_runtime: where the installed muster libraries are.

lib/: libmuster.so, libmuster_jax.so, liburcu (or its copy that `auditwheel
repair` put in muster_runtime.libs/), and muster/providers/<routine>/<backend>.so,
which the runtime finds beside libmuster.so.  bin/: the muster and shmdump
programs (the console commands `muster` and `shmdump` run them).  The
adapters (muster_jax, muster_torch, muster_tf) ask lib_dir() for their
libraries.
"""
import pathlib
from importlib import metadata

_HERE = pathlib.Path(__file__).resolve().parent

try:
    __version__ = metadata.version("muster-runtime")
except metadata.PackageNotFoundError:  # imported from a folder that is not installed
    __version__ = "0+unknown"


def lib_dir() -> pathlib.Path:
    """The folder holding libmuster.so and muster/providers."""
    return _HERE / "lib"


def bin_dir() -> pathlib.Path:
    """The folder holding the muster and shmdump programs."""
    return _HERE / "bin"
