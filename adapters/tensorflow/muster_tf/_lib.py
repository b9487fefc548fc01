"""Finding and loading libmuster_tf.so (the TensorFlow op library), the
libmuster.so it links, and the TensorFlow it was built against.

Two layouts (docs/install.md, docs/tensorflow.md):
* the muster_tf wheel (tools/wheels/build.sh): lib/libmuster_tf.so in this
  package, built against one TensorFlow (_built_for.py names it; checked
  at import), and libmuster.so in the muster-runtime wheel, found by
  _runtime.py's search order ($MUSTER_LIB_DIR, the runtime wheel).
  libmuster.so is loaded first, by path: libmuster_tf.so's need of it
  (soname libmuster.so) is met by that copy wherever the runtime wheel is
  installed (its rpath names the runtime wheel beside it too).
* a build: both in one folder, found by _runtime.py ($MUSTER_LIB_DIR, and
  in a source tree $MUSTER_BUILD/lib, <repo>/build/lib); libmuster_tf.so
  finds libmuster.so next to itself (rpath $ORIGIN).  A $MUSTER_LIB_DIR
  that holds libmuster_tf.so wins over the wheel's copy.
The runtime finds its providers under <libmuster.so's folder>/muster/providers
unless $MUSTER_PROVIDER_PATH says otherwise.  muster_tf reaches the
runtime's own functions (the layout rules) through ctypes on that same
libmuster.so.
"""
import os
import pathlib
import runpy
import threading

from . import _runtime

_PKG = pathlib.Path(__file__).resolve().parent
LIBNAME = "libmuster_tf.so"
_BUILT_FOR = _PKG / "_built_for.py"  # only in the wheel

_lock = threading.Lock()
_state = {}


def _wheel_lib():
    """The wheel's lib/libmuster_tf.so, unless $MUSTER_LIB_DIR holds one (or
    this is not the wheel): None then."""
    own = _PKG / "lib" / LIBNAME
    env = os.environ.get("MUSTER_LIB_DIR")
    if not (_BUILT_FOR.exists() and own.exists()) or (env and (pathlib.Path(env) / LIBNAME).exists()):
        return None
    return own


def lib_path():
    """Path of the libmuster_tf.so that muster_tf loads.  ImportError, saying
    what is missing and how to get it, when it or libmuster.so is not found."""
    own = _wheel_lib()
    if own is not None:
        runtime_dir()  # the runtime wheel must be there too
        return own
    return _runtime.lib_dir(_PKG, LIBNAME, "muster_tf") / LIBNAME


def runtime_dir():
    """The folder of the libmuster.so that libmuster_tf.so uses."""
    if _wheel_lib() is not None:
        return _runtime.lib_dir(_PKG, "libmuster.so", "muster_tf")
    return lib_path().parent


def built_for():
    """(distribution, version) of the TensorFlow the wheel's libmuster_tf.so
    was built against; None where a build's is loaded (the build's own
    TensorFlow)."""
    if _wheel_lib() is None:
        return None
    d = runpy.run_path(str(_BUILT_FOR))
    return d["DIST"], d["VERSION"]


def _major_minor(v):
    return ".".join(v.split(".")[:2])


def import_tensorflow():
    """tensorflow, once it is known to be the version libmuster_tf.so was
    built against (its C++ ABI: the same minor version).  ImportError
    saying what is missing and how to get it otherwise."""
    built = built_for()
    if built:
        mm = _major_minor(built[1])
        need = f"TensorFlow {mm} (it was built against {built[0]} {built[1]})"
        how = (f"Install TensorFlow {mm} (pip install '{built[0]}=={mm}.*', or 'tensorflow=={mm}.*'; "
               "docs/install.md), or build muster_tf for yours (tools/wheels/build.sh with it in "
               "build/venv)")
    else:
        need, how = "TensorFlow", "Install it (pip install tensorflow-cpu; docs/tensorflow.md)"
    try:
        import tensorflow as tf
    except ModuleNotFoundError as e:
        if e.name != "tensorflow":
            raise
        raise ImportError(f"muster_tf needs {need}, and this Python has none. {how}") from None
    have = getattr(tf, "__version__", "?")
    if built and _major_minor(have) != _major_minor(built[1]):
        raise ImportError(f"muster_tf needs {need}: its libmuster_tf.so works with that one only, "
                          f"and this Python has TensorFlow {have} ({pathlib.Path(tf.__file__).parent}). "
                          f"{how}")
    return tf


def ops():
    """The op module of tf.load_op_library (muster_potrs, muster_potri,
    muster_syevd), loaded once per process."""
    with _lock:
        if "ops" not in _state:
            p = lib_path()
            runtime()  # libmuster.so first: the copy libmuster_tf.so links
            _state["ops"] = import_tensorflow().load_op_library(str(p))
            _state["path"] = p
        return _state["ops"]


def runtime():
    """libmuster.so (ctypes), the copy that libmuster_tf.so uses too, with
    the runtime's functions declared; loaded once."""
    return _runtime.load(runtime_dir())


def block_cols(n, nranks, rank):
    """(first column, column count) of `rank`'s block of an n-column matrix
    over `nranks` (muster_layout_block_cols); ValueError with the runtime's
    message for arguments it refuses."""
    try:
        return _runtime.block_cols(runtime(), n, nranks, rank)
    except ValueError as e:
        raise ValueError("muster_tf.block_columns: %s" % e) from None
