"""Finding and loading libmuster_tf.so (the TensorFlow op library).

Search order for the folder holding libmuster_tf.so (the same as muster_jax):
  1. <package>/lib                    (a copy installed with the package)
  2. $MUSTER_LIB_DIR                  (explicit override)
  3. $MUSTER_BUILD/lib (relative to the repository unless absolute), then
     <repo>/build/lib                 (source tree after `scons`)
libmuster_tf.so finds libmuster.so next to itself (rpath $ORIGIN), and the
runtime finds its providers under <that folder>/muster/providers unless
$MUSTER_PROVIDER_PATH says otherwise.  muster_tf reaches the runtime's own
functions (the layout rules) through ctypes on that same libmuster.so.
"""
import ctypes
import os
import pathlib
import threading

import tensorflow as tf

_PKG = pathlib.Path(__file__).resolve().parent
_REPO = _PKG.parent.parent.parent  # adapters/tensorflow/muster_tf -> repo root
LIBNAME = "libmuster_tf.so"

_lock = threading.Lock()
_state = {}


def _candidates():
    yield _PKG / "lib"
    if os.environ.get("MUSTER_LIB_DIR"):
        yield pathlib.Path(os.environ["MUSTER_LIB_DIR"])
    if os.environ.get("MUSTER_BUILD"):
        b = pathlib.Path(os.environ["MUSTER_BUILD"])
        yield (b if b.is_absolute() else _REPO / b) / "lib"
    yield _REPO / "build" / "lib"


def lib_path():
    """Path of the libmuster_tf.so that muster_tf loads."""
    tried = []
    for d in _candidates():
        p = d / LIBNAME
        if p.exists():
            return p
        tried.append(str(d))
    raise ImportError("muster_tf: %s not found in %s (build it with `scons` in a Python "
                      "environment where tensorflow is installed, or set MUSTER_LIB_DIR)"
                      % (LIBNAME, ", ".join(tried)))


def ops():
    """The op module of tf.load_op_library (muster_potrs, muster_potri,
    muster_syevd), loaded once per process."""
    with _lock:
        if "ops" not in _state:
            p = lib_path()
            _state["ops"] = tf.load_op_library(str(p))
            _state["path"] = p
        return _state["ops"]


def runtime():
    """libmuster.so (ctypes), the copy next to libmuster_tf.so that the ops
    use too, with the functions muster_tf calls declared; loaded once."""
    with _lock:
        if "muster" not in _state:
            lib = ctypes.CDLL(str(lib_path().parent / "libmuster.so"))
            i64p = ctypes.POINTER(ctypes.c_int64)
            lib.muster_layout_block_cols.restype = ctypes.c_int
            lib.muster_layout_block_cols.argtypes = [ctypes.c_int64, ctypes.c_int, ctypes.c_int,
                                                     i64p, i64p]
            lib.muster_last_error.restype = ctypes.c_char_p
            lib.muster_last_error.argtypes = []
            _state["muster"] = lib
        return _state["muster"]


def block_cols(n, nranks, rank):
    """(first column, column count) of `rank`'s block of an n-column matrix
    over `nranks` (muster_layout_block_cols); ValueError with the runtime's
    message for arguments it refuses."""
    lib = runtime()
    c0, k = ctypes.c_int64(), ctypes.c_int64()
    if lib.muster_layout_block_cols(n, nranks, rank, ctypes.byref(c0), ctypes.byref(k)) != 0:
        raise ValueError("muster_tf.block_columns: "
                         + lib.muster_last_error().decode(errors="replace"))
    return c0.value, k.value
