"""Finding and loading libmuster_tf.so (the TensorFlow op library).

The folder holding libmuster_tf.so is found by _runtime.py
(adapters/common/runtime.py, shared with the other adapters; the same
search order as muster_jax):
$MUSTER_LIB_DIR, the muster-runtime wheel's lib folder, and in a source
tree $MUSTER_BUILD/lib, <repo>/build/lib.  (No muster_tf wheel yet:
libmuster_tf.so is built against one TensorFlow, docs/install.md.)
libmuster_tf.so finds libmuster.so next to itself (rpath $ORIGIN), and the
runtime finds its providers under <that folder>/muster/providers unless
$MUSTER_PROVIDER_PATH says otherwise.  muster_tf reaches the runtime's own
functions (the layout rules) through ctypes on that same libmuster.so.
"""
import pathlib
import threading

import tensorflow as tf

from . import _runtime

_PKG = pathlib.Path(__file__).resolve().parent
LIBNAME = "libmuster_tf.so"

_lock = threading.Lock()
_state = {}


def lib_path():
    """Path of the libmuster_tf.so that muster_tf loads."""
    return _runtime.lib_dir(_PKG, LIBNAME, "muster_tf") / LIBNAME


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
    use too, with the runtime's functions declared; loaded once."""
    return _runtime.load(lib_path().parent)


def block_cols(n, nranks, rank):
    """(first column, column count) of `rank`'s block of an n-column matrix
    over `nranks` (muster_layout_block_cols); ValueError with the runtime's
    message for arguments it refuses."""
    try:
        return _runtime.block_cols(runtime(), n, nranks, rank)
    except ValueError as e:
        raise ValueError("muster_tf.block_columns: %s" % e) from None
