"""Finding libmuster_jax.so / libmuster.so, registering the FFI handler, and
the runtime's C functions muster_jax calls through ctypes.

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


def lib_dir() -> pathlib.Path:
    """The folder libmuster_jax.so is loaded from.

    Returns:
      The first folder of the search order (module docstring) that holds it.

    Raises:
      ImportError: no folder of the search order holds it.
    """
    tried = []
    for d in _candidates():
        if (d / "libmuster_jax.so").exists():
            return d
        tried.append(str(d))
    raise ImportError("muster_jax: libmuster_jax.so not found in " + ", ".join(tried) +
                      " (build it with `scons`, or set MUSTER_LIB_DIR)")


# (name, restype, argtypes) of every libmuster function muster_jax calls
_i64, _i32, _str = ctypes.c_int64, ctypes.c_int, ctypes.c_char_p
_P64 = ctypes.POINTER(_i64)
_RUNTIME_FUNCS = (
    ("muster_layout_valid_tiles", _i64, [_i64, _i32, _P64, _i64]),
    ("muster_layout_check_tile", _i32, [_i64, _i64, _i32]),
    ("muster_layout_local_cols", _i64, [_i64, _i64, _i32]),
    ("muster_layout_block_cols", _i32, [_i64, _i32, _i32, _P64, _P64]),
    ("muster_layout_cyclic_cols", _i64, [_i64, _i64, _i32, _i32, _P64, _i64]),
    ("muster_routine_from_name", _i32, [_str, ctypes.POINTER(_i32)]),
    ("muster_last_error", _str, []),
    ("muster_strerror", _str, [_i32]),
    ("muster_err_name", _str, [_i32]),
    ("muster_err_kind", _i32, [_i32]),
    ("muster_err_kind_name", _str, [_i32]),
)


def _declare(lib):
    for name, restype, argtypes in _RUNTIME_FUNCS:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


def load() -> dict:
    """Load the libraries and register the handler (once per process).

    Returns:
      The loaded state: "muster" (libmuster.so), "handler"
      (libmuster_jax.so), "dir" (their folder) and "cuda" (whether the
      handler was registered for the CUDA platform too).
    """
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


def runtime() -> ctypes.CDLL:
    """libmuster.so, loaded, with the functions muster_jax calls declared."""
    return load()["muster"]


def last_error() -> str:
    """The runtime's message for the last failure of this thread ("" if none)."""
    return runtime().muster_last_error().decode(errors="replace")


def strerror(code: int) -> str:
    """Short meaning of a MUSTER_E* code.

    Args:
      code: a status < 0 of a solve, or any return code of the runtime.

    Returns:
      Its meaning ("peer died"); the runtime's text for an unknown code.
    """
    return runtime().muster_strerror(int(code)).decode(errors="replace")


def err_name(code: int) -> str:
    """The name of a MUSTER_E* code ("MUSTER_EPEERDEAD"; "MUSTER_E?" if unknown)."""
    return runtime().muster_err_name(int(code)).decode(errors="replace")


def err_kind(code: int) -> str:
    """The kind of failure a code is ("numerical", "aborted"...; docs/errors.md)."""
    lib = runtime()
    return lib.muster_err_kind_name(lib.muster_err_kind(int(code))).decode(errors="replace")


def check(rc: int) -> int:
    """Raise for a failed runtime call, else pass its result through.

    Args:
      rc: what a libmuster function returned (< 0: a MUSTER_E* code).

    Returns:
      rc, when it is >= 0.

    Raises:
      ValueError: rc < 0; the message is the runtime's, or the code's name
        and meaning where the runtime left none.
    """
    if rc < 0:
        raise ValueError(last_error() or f"{err_name(rc)}: {strerror(rc)} ({err_kind(rc)})")
    return rc


def routine_code(name: str) -> int:
    """The runtime's value of a routine ("potrs" -> MUSTER_POTRS).

    Args:
      name: the routine's name, as muster_routine_name spells it.

    Returns:
      Its muster_routine_t value, which the handler's routine attribute takes.
    """
    out = ctypes.c_int()
    check(runtime().muster_routine_from_name(name.encode(), ctypes.byref(out)))
    return out.value


def ffi_api_version() -> tuple[int, int]:
    """The XLA FFI API version the handler reports to XLA.

    Returns:
      (major, minor).
    """
    h = load()["handler"]
    major, minor = ctypes.c_int(), ctypes.c_int()
    h.muster_jax_ffi_api_version(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def last_solve() -> dict:
    """What the last solve of a rank 0 in this process took, as measured by
    the handler around muster_solve.

    Returns:
      dict(solve_s, provider_s, tile, provider, calls): seconds in
      muster_solve (the cost of the C path of the same call), seconds in the
      provider, the tile and provider used, and how many solves so far.
    """
    h = load()["handler"]
    solve_s, prov_s = ctypes.c_double(), ctypes.c_double()
    tile, calls = ctypes.c_int64(), ctypes.c_uint64()
    name = ctypes.create_string_buffer(32)
    h.muster_jax_last_solve(ctypes.byref(solve_s), ctypes.byref(prov_s), ctypes.byref(tile), name,
                            ctypes.c_size_t(32), ctypes.byref(calls))
    return dict(solve_s=solve_s.value, provider_s=prov_s.value, tile=tile.value,
                provider=name.value.decode(), calls=calls.value)
