"""Finding libmuster_jax.so / libmuster.so, registering the FFI handler, and
the runtime's C functions muster_jax calls through ctypes.

The folder is found, and libmuster.so loaded with its ctypes signatures, by
_runtime.py (adapters/common/runtime.py, shared with the other adapters):
$MUSTER_LIB_DIR, the muster-runtime wheel's lib folder, and in a
source tree $MUSTER_BUILD/lib, <repo>/build/lib; none: ImportError at import.
"""
import ctypes
import pathlib
import threading

import jax

from . import _runtime

_PKG = pathlib.Path(__file__).resolve().parent

TARGET = "muster_jax"
STORE_TARGET = "muster_jax_store"  # muster_jax.distributed's solve inside jit (store_ffi.c)
NOTHING_TARGET = "muster_jax_nothing"  # muster_jax.distributed.clear_failure()'s empty call (ffi.c)
_lock = threading.Lock()
_state = {}


def lib_dir() -> pathlib.Path:
    """The folder libmuster_jax.so is loaded from.

    Returns:
      The first folder of the search order (module docstring) that holds it.

    Raises:
      ImportError: no folder of the search order holds it.
    """
    return _runtime.lib_dir(_PKG, "libmuster_jax.so", "muster_jax")


def version() -> str:
    """The installed muster_jax's version (its metadata; the runtime's too)."""
    return _runtime.package_version("muster_jax")


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
        muster = _runtime.load(d)
        handler = ctypes.CDLL(str(d / "libmuster_jax.so"))
        for target, prefix in ((TARGET, "muster_jax"), (STORE_TARGET, "muster_jax_store")):
            jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(handler, prefix + "_cpu")),
                                        platform="cpu")
        jax.ffi.register_ffi_target(NOTHING_TARGET, jax.ffi.pycapsule(handler.muster_jax_nothing), platform="cpu")
        _declare_sets(handler)
        try:
            for target, prefix in ((TARGET, "muster_jax"), (STORE_TARGET, "muster_jax_store")):
                jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(handler, prefix + "_cuda")),
                                            platform="CUDA")
            jax.ffi.register_ffi_target(NOTHING_TARGET, jax.ffi.pycapsule(handler.muster_jax_nothing),
                                        platform="CUDA")
            _state["cuda"] = True
        except Exception:  # jaxlib without the cuda plugin: cpu only
            _state["cuda"] = False
        _state.update(muster=muster, handler=handler, dir=d)
        return _state


def _declare_sets(handler):
    """The set table's functions (set_table.c): a StoreSet's comm as the id
    a compiled solve names it by."""
    handler.muster_jax_set_register.restype, handler.muster_jax_set_register.argtypes = (ctypes.c_int64,
                                                                                        [ctypes.c_void_p])
    for name in ("muster_jax_set_forget", "muster_jax_set_enter"):
        getattr(handler, name).restype, getattr(handler, name).argtypes = ctypes.c_int, [ctypes.c_int64]
    handler.muster_jax_set_leave.restype, handler.muster_jax_set_leave.argtypes = None, [ctypes.c_int64]


def handler() -> ctypes.CDLL:
    """libmuster_jax.so, loaded, the handlers registered."""
    return load()["handler"]


def runtime() -> ctypes.CDLL:
    """libmuster.so, loaded, with the functions muster_jax calls declared."""
    return load()["muster"]


def last_error() -> str:
    """The runtime's message for the last failure of this thread ("" if none)."""
    return _runtime.last_error(runtime())


def strerror(code: int) -> str:
    """Short meaning of a MUSTER_E* code.

    Args:
      code: a status < 0 of a solve, or any return code of the runtime.

    Returns:
      Its meaning ("peer died"); the runtime's text for an unknown code.
    """
    return _runtime.strerror(runtime(), code)


def check(rc: int) -> int:
    """Raise for a failed runtime call, else pass its result through.

    Args:
      rc: what a libmuster function returned (< 0: a MUSTER_E* code).

    Returns:
      rc, when it is >= 0.

    Raises:
      _runtime.CallError (a ValueError with the code, its name and kind):
        rc < 0; the message is the runtime's, or the code's name and
        meaning where the runtime left none.
    """
    return _runtime.check(runtime(), rc)


def routine_code(name: str) -> int:
    """The runtime's value of a routine ("potrs" -> MUSTER_POTRS).

    Args:
      name: the routine's name, as muster_routine_name spells it.

    Returns:
      Its muster_routine_t value, which the handler's routine attribute takes.
    """
    return _runtime.enum_value(runtime(), "routine", name)


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
    the handler around muster_solve_named.

    Returns:
      dict(solve_s, provider_s, tile, provider, calls): seconds in
      muster_solve_named (join, solve, leave: the cost of the C path of the
      same call), seconds in the
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


def routine_outputs(routine: int, flags: int, m: int, n: int) -> dict:
    """Where geqrf, gesvd or polar leave their factors: the runtime's one
    rule (_runtime.routine_outputs: muster_routine_outputs, muster/layout.h,
    docs/factorizations.md); factors by name ("Q", "R", "U", "VH", "UP", "H").

    Raises:
      ValueError: a routine, flag or shape the rule refuses.
    """
    return _runtime.routine_outputs(load()["muster"], routine, flags, m, n)


def release() -> None:
    """Give back the GPU memory muster's providers keep between calls.

    The runtime's rule (_runtime.release(), from
    include/muster/providers.h): every provider loaded in this process is
    unloaded once no call uses it, and the next solve loads it again.  Call
    it on every process of a multi-process set, between solves.  A jitted
    solve still queued on a device runs afterwards with a freshly loaded
    provider.  Thread-safe.  docs/jax.md.

    Raises:
      _runtime.CallError (a ValueError with the code): the runtime refused
        (out of memory, or the process is exiting); its message.
    """
    check(_runtime.release(runtime()))
