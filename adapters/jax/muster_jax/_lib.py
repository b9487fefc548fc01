"""Finding libmuster_jax.so / libmuster.so and registering the FFI handler.

Search order for the folder holding libmuster_jax.so:
  1. <package>/lib                    (a pip-installed copy carries it)
  2. $MUSTER_LIB_DIR                  (explicit override)
  3. <repo>/$MUSTER_BUILD/lib, <repo>/build/lib   (source tree after `scons`)
"""
import ctypes
import os
import pathlib
import threading

import jax

_PKG = pathlib.Path(__file__).resolve().parent
_REPO = _PKG.parent.parent.parent  # adapters/jax/muster_jax -> repo root

TARGET = "muster_jax"
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


def lib_dir():
    """The folder libmuster_jax.so is loaded from."""
    tried = []
    for d in _candidates():
        if (d / "libmuster_jax.so").exists():
            return d
        tried.append(str(d))
    raise ImportError("muster_jax: libmuster_jax.so not found in " + ", ".join(tried) +
                      " (build it with `scons`, or set MUSTER_LIB_DIR)")


def _declare(lib):
    i64, i32 = ctypes.c_int64, ctypes.c_int
    lib.muster_layout_valid_tiles.restype = i64
    lib.muster_layout_valid_tiles.argtypes = [i64, i32, ctypes.POINTER(i64), i64]
    lib.muster_layout_check_tile.restype = i32
    lib.muster_layout_check_tile.argtypes = [i64, i64, i32]
    lib.muster_layout_local_cols.restype = i64
    lib.muster_layout_local_cols.argtypes = [i64, i64, i32]
    lib.muster_last_error.restype = ctypes.c_char_p
    lib.muster_strerror.restype = ctypes.c_char_p
    lib.muster_strerror.argtypes = [i32]


def load():
    """Load the libraries and register the handler (once per process)."""
    with _lock:
        if "muster" in _state:
            return _state
        d = lib_dir()
        # libmuster_jax.so finds libmuster.so next to it (rpath $ORIGIN); load
        # the runtime by path too so ctypes reaches muster_layout_* directly.
        muster = ctypes.CDLL(str(d / "libmuster.so"))
        handler = ctypes.CDLL(str(d / "libmuster_jax.so"))
        _declare(muster)
        jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(handler.muster_jax_cpu),
                                    platform="cpu")
        try:
            jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(handler.muster_jax_cuda),
                                        platform="CUDA")
            _state["cuda"] = True
        except Exception:  # jaxlib without the cuda plugin: cpu only
            _state["cuda"] = False
        _state.update(muster=muster, handler=handler, dir=d)
        return _state


def runtime():
    return load()["muster"]


def last_error():
    return runtime().muster_last_error().decode(errors="replace")


def strerror(code):
    """Short meaning of a MUSTER_E* code (a status < 0)."""
    return runtime().muster_strerror(int(code)).decode(errors="replace")


def ffi_api_version():
    h = load()["handler"]
    major, minor = ctypes.c_int(), ctypes.c_int()
    h.muster_jax_ffi_api_version(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def last_solve():
    """What the last solve of a rank 0 in this process took, as measured by
    the handler around muster_solve: dict(solve_s, provider_s, tile,
    provider, calls).  solve_s is the cost of the C path of the same call."""
    h = load()["handler"]
    solve_s, prov_s = ctypes.c_double(), ctypes.c_double()
    tile, calls = ctypes.c_int64(), ctypes.c_uint64()
    name = ctypes.create_string_buffer(32)
    h.muster_jax_last_solve(ctypes.byref(solve_s), ctypes.byref(prov_s), ctypes.byref(tile), name,
                            ctypes.c_size_t(32), ctypes.byref(calls))
    return dict(solve_s=solve_s.value, provider_s=prov_s.value, tile=tile.value,
                provider=name.value.decode(), calls=calls.value)
