"""libmuster.so for muster_torch, and the runtime's failures as the Python
exceptions torch users expect.

muster_torch has no library of its own: the ops call libmuster's C API
(muster_solve_all, muster_solve_named, muster_shard_alloc)
through ctypes, which releases the GIL for the whole call.  The folder is
found, and libmuster.so loaded with its signatures, by _runtime.py
(adapters/common/runtime.py, shared with muster_jax and muster_tf):
$MUSTER_LIB_DIR, the muster-runtime wheel's lib folder, and in a
source tree $MUSTER_BUILD/lib, <repo>/build/lib; none: ImportError at import.

A failure maps by its kind (muster_err_kind, docs/errors.md), never code by
code, to one of the exception classes below; each is also a MusterError
carrying the code, its kind and the runtime's message.  muster_torch.
distributed (the store route) raises the same classes made CallErrors
(ValueErrors) too, as that API raised ValueError before (store_error).
"""
import ctypes
import pathlib

import torch

from . import _runtime

_PKG = pathlib.Path(__file__).resolve().parent
_state = {}


def lib_dir() -> pathlib.Path:
    """The folder libmuster.so (and its providers) is loaded from."""
    if "dir" not in _state:
        _state["dir"] = _runtime.lib_dir(_PKG, "libmuster.so", "muster_torch")
    return _state["dir"]


def runtime() -> ctypes.CDLL:
    """libmuster.so, loaded once, with every function muster_torch calls declared."""
    return _runtime.load(lib_dir())


def strerror(code: int) -> str:
    """Short meaning of a MUSTER_E* code ("peer died")."""
    return _runtime.strerror(runtime(), code)


class MusterError(Exception):
    """A failed muster call.  Attributes: code (the MUSTER_E* value), kind
    (its kind, "numerical", "aborted"...), info (potrs: the order of the
    leading minor that is not positive definite, else 0)."""

    def __init__(self, msg, code=0, kind="internal", info=0):
        super().__init__(msg)
        self.code, self.kind, self.info = code, kind, info


class MusterValueError(MusterError, ValueError):
    """invalid_argument: shapes, layouts, tiles, or ranks that disagree."""


class MusterLinAlgError(MusterError, torch.linalg.LinAlgError):
    """numerical: not positive definite (info = k), or NaN/Inf in the input."""


class MusterTimeoutError(MusterError, TimeoutError):
    """deadline_exceeded: peers did not come within MUSTER_TIMEOUT."""


class MusterRuntimeError(MusterError, RuntimeError):
    """aborted (a peer died, the group was aborted), failed_precondition, internal."""


class MusterMemoryError(MusterError, MemoryError):
    """resource_exhausted: memory or /dev/shm space."""


class MusterPermissionError(MusterError, PermissionError):
    """permission_denied."""


class MusterNotFoundError(MusterError, FileNotFoundError):
    """not_found."""


class MusterNotImplementedError(MusterError, NotImplementedError):
    """unimplemented: no provider for this routine, dtype or memory here."""


# docs/errors.md's PyTorch column
KIND_EXCEPTIONS = {
    "invalid_argument": MusterValueError,
    "numerical": MusterLinAlgError,
    "deadline_exceeded": MusterTimeoutError,
    "aborted": MusterRuntimeError,
    "resource_exhausted": MusterMemoryError,
    "permission_denied": MusterPermissionError,
    "not_found": MusterNotFoundError,
    "unimplemented": MusterNotImplementedError,
    "failed_precondition": MusterRuntimeError,
    "internal": MusterRuntimeError,
}


def error(rc: int, what: str, info: int = 0) -> MusterError:
    """The exception for a failed runtime call, by the code's kind.

    Args:
      rc: the negative MUSTER_E* code.
      what: who failed, prefixed to the message ("muster_torch.potrs (group
        th.x, rank 1 of 2)").
      info: potrs's leading minor, for numerical failures.

    Must run on the thread that made the call, before any other runtime
    call: the runtime's message is thread-local.
    """
    lib = runtime()
    kind = _runtime.err_kind(lib, rc)
    cls = KIND_EXCEPTIONS.get(kind, MusterRuntimeError)
    return cls(f"{what}: {_runtime.message(lib, rc)}", code=rc, kind=kind, info=info)


def _store_class(cls: type) -> type:
    """cls (a class of KIND_EXCEPTIONS) that is a _runtime.CallError too,
    so a ValueError: MusterStoreTimeoutError for MusterTimeoutError."""
    def __init__(self, msg, code=0, name="", kind="internal", info=0):
        cls.__init__(self, msg, code=code, kind=kind, info=info)
        self.name = name  # CallError's, which cls's bases may not run
    doc = (f"{cls.__name__} of muster_torch.distributed (the store route): also a "
           "muster_torch.distributed.CallError, a ValueError, as that API raised before its errors had kinds.")
    return type("MusterStore" + cls.__name__[len("Muster"):], (cls, _runtime.CallError),
                {"__init__": __init__, "__doc__": doc, "__module__": __name__})


# KIND_EXCEPTIONS' class -> its store route's (docs/errors.md)
STORE_EXCEPTIONS = {cls: _store_class(cls) for cls in dict.fromkeys(KIND_EXCEPTIONS.values())}


def store_error(lib, rc: int) -> MusterError:
    """muster_torch.distributed's exception for a failed runtime call
    (StoreSet's error): _runtime.call_error's text, code, name and kind,
    as the class of its kind (KIND_EXCEPTIONS) that is also a CallError:
    `except MemoryError` (or MusterError) catches a peer's ENOMEM as it
    does a local op's, and `except ValueError` everything it caught
    before.  The thread rule of error() holds."""
    e = _runtime.call_error(lib, rc)
    cls = STORE_EXCEPTIONS[KIND_EXCEPTIONS.get(e.kind, MusterRuntimeError)]
    return cls(str(e), code=e.code, name=e.name, kind=e.kind)


def release() -> None:
    """Give back the GPU memory muster's providers keep between calls.

    The runtime's rule (_runtime.release(), from
    include/muster/providers.h): every provider loaded in this process is
    unloaded once no call uses it, and the next solve loads it again.  Call
    it on every process of a process group, between solves.  Thread-safe.
    docs/torch.md.

    Raises:
      MusterError (by kind, as every muster_torch error): the runtime
        refused (out of memory, or the process is exiting).
    """
    rc = _runtime.release(runtime())
    if rc < 0:
        raise error(rc, "muster_torch.release")
