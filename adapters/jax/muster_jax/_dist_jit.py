"""muster_jax.distributed.solve inside jax.jit: the host (CPU) form.

Traced, solve() becomes one ordered jax.experimental.io_callback whose
Python callback is the eager solve itself, run on the host arrays XLA hands
it (numpy views of the operands); its results go back into the compiled
program.  So the jitted form gives what the eager form gives, by
construction, and fails with the same message.

Why a callback and not an FFI custom call: the store set's key-value
traffic already runs in Python (jax's distributed client through ctypes
callbacks, _store.py), so a C handler would save only the copies the eager
form makes anyway, and its GPU half (XLA's stream, device buffers) could
not be run where it was written.  The price: GPU arrays cannot use this
form (their data would cross to the host and no collective host engine
runs beside cusolvermp), so tracing on a GPU backend is refused naming the
eager form.

ordered=True because every process of the set must enter its collective
solves in the same order: an ordered callback runs in program order, never
elided nor repeated.  The StoreSet is held by the callback, so it lives as
long as the compiled function; a set closed meanwhile makes the call fail.
"""
import jax
import numpy as np
from jax.experimental import io_callback

NPTYPES = {"f64": np.float64, "f32": np.float32, "c64": np.complex64, "c128": np.complex128}


def traced(*xs) -> bool:
    """Whether any of xs is a tracer (solve() was called inside a transformation)."""
    return any(isinstance(x, jax.core.Tracer) for x in xs)


def _refuse_gpu(routine: str):
    """Inside jit the data must be on the host: the callback reads host arrays."""
    backend = jax.default_backend()
    if backend != "cpu":
        raise ValueError(f"muster_jax.distributed.solve({routine!r}) inside jax.jit runs on host (CPU) arrays "
                         f"only, and this process's backend is {backend!r}: call the eager form "
                         f"(muster_jax.distributed.solve outside jit) on GPU arrays, which hands their device "
                         f"memory to cusolvermp")


def solve(eager, place, routine: str, a_piece, b, *, n: int, store, provider, dtype: str, no_vectors: bool,
          grid):
    """The traced form of distributed.solve (same arguments; eager and place
    are its eager solve and _place).  Results: jax arrays of the eager
    form's shapes and dtypes."""
    _refuse_gpu(routine)
    nptype = NPTYPES[dtype]
    rows, ncols, _, _ = place(n, store, grid)  # checks grid and rank as the eager form does, at trace time
    if routine == "syevd":
        wtype = np.float64 if dtype in ("f64", "c128") else np.float32
        shapes = (jax.ShapeDtypeStruct((n,), wtype), jax.ShapeDtypeStruct((rows, ncols), nptype))
    elif b is not None:
        nrhs = int(np.shape(b)[1] if np.ndim(b) == 2 else 1)
        shapes = jax.ShapeDtypeStruct((n, nrhs), nptype)
    else:
        raise ValueError(f"muster_jax.distributed.solve({routine!r}) inside jax.jit: potrs and getrs need b, "
                         f"syevd takes none")

    def on_host(a, *rest):
        out = eager(routine, np.asarray(a), np.asarray(rest[0]) if rest else None, n=n, store=store,
                    provider=provider, dtype=dtype, no_vectors=no_vectors, grid=grid)
        return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)

    operands = (a_piece,) if b is None else (a_piece, b)
    return io_callback(on_host, shapes, *operands, ordered=True)
