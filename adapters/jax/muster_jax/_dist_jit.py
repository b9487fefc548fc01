"""muster_jax.distributed.solve inside jax.jit: one XLA FFI custom call
(target muster_jax_store, adapters/jax/store_ffi.c) whose handler runs the
collective solve on the buffers XLA hands it, host buffers on the CPU and
device buffers on GPUs, so nothing passes through Python at run time but
the store set's own key-value traffic.

The set is named by a static attribute, an id that libmuster_jax.so maps
to the set's communicator (set_table.c): given at the first traced solve on
the set, forgotten when the set closes.  A compiled function therefore
holds no pointer that could dangle: called after its set closed it fails
with a message.  Closing waits for a jitted solve in flight on the set,
and an eager solve on a set with an id waits for one too (held()), so the
protocol rounds of two solves never interleave.

The custom call has a side effect (never elided, never duplicated); its
operands are this process's piece of A and all of B (potrs, getrs, gels),
column-major, aliased to its results (A's copy is the engine's scratch or
the factor shaped like A, B's becomes X), as the eager form's copies are;
its other results, of static shapes, are what the eager form allocates:
the B the runtime packs geqrf's, gesvd's and polar's whole factors into,
and W (syevd's eigenvalues, gesvd's singular values).
"""
import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import _lib, _runtime

NPTYPES = {"f64": np.float64, "f32": np.float32, "c64": np.complex64, "c128": np.complex128}
_COLMAJOR = (1, 0)  # jax.ffi layouts are major-to-minor: (1, 0) is column-major
_DIST = ("nprow", "npcol", "myrow", "mycol", "mb", "nb")  # the 2-D piece's attributes (0: a column block)
_lock = threading.Lock()


def traced(*xs) -> bool:
    """Whether any of xs is a tracer (solve() was called inside jit)."""
    return any(isinstance(x, jax.core.Tracer) for x in xs)


def set_id(store) -> int:
    """The id compiled solves name `store` by (set_table.c), given once;
    store.close() forgets it (after any jitted solve in flight on it)."""
    comm = store.comm()  # ValueError when the set is closed: refused when tracing, as an eager solve is
    with _lock:
        sid = getattr(store, "_jax_set_id", None)
        if sid is None:
            h = _lib.handler()
            sid = h.muster_jax_set_register(comm)
            if sid < 0:
                def say(m):
                    return (f"muster_jax.distributed: cannot name store set {store.name} in a compiled solve: {m} "
                            "(at most 256 sets may be open)")
                raise _runtime.call_error(_lib.runtime(), sid, say)
            store._jax_set_id = sid
            store.on_close.append(lambda: h.muster_jax_set_forget(sid))
        return sid


class held:
    """While an eager solve runs on a set that compiled solves name: no
    jitted solve on it runs at the same time (the table's hold)."""

    def __init__(self, store):
        self.sid = getattr(store, "_jax_set_id", None)
        self.taken = False

    def __enter__(self):
        if self.sid is not None:  # ENOENT when the set closed: the solve then says so itself
            self.taken = _lib.handler().muster_jax_set_enter(self.sid) == 0
        return self

    def __exit__(self, *exc):
        if self.taken:
            _lib.handler().muster_jax_set_leave(self.sid)


def solve(place, call: dict, routine: str, a_piece, b, *, n: int, store, provider, dtype: str, grid):
    """The traced form of distributed.solve (its arguments checked there
    into `call`, _store.call_shape's dict; place is its _place): (A's
    result, B's (m x nrhs) or None, W or None) as jax arrays of the eager
    form's shapes and dtypes, all static: from n, m and the routine's
    options by the runtime's outputs rule, as eagerly."""
    nptype = NPTYPES[dtype]
    mrows, nrhs = call["m"], call["nrhs"]
    rows, ncols, col0, dist = place(n, store, grid, a_piece, mrows)  # grid, rank and piece checked as eagerly
    lib = _lib.runtime()
    attrs = dict(set=np.int64(set_id(store)), routine=np.int32(_runtime.enum_value(lib, "routine", routine)),
                 n=np.int64(n), m=np.int64(mrows), col0=np.int64(col0), flags=np.int32(call["flags"]),
                 provider=provider or "", **{f: np.int64(0 if dist is None else getattr(dist, f)) for f in _DIST})
    a = jnp.asarray(a_piece, nptype).reshape(rows, ncols)
    ins, outs, aliases = [a], [jax.ShapeDtypeStruct(a.shape, a.dtype)], {0: 0}
    if b is not None:  # potrs, getrs, gels: B becomes X
        ins.append(jnp.asarray(b, nptype).reshape(mrows, nrhs))
        aliases[1] = 1
    if nrhs:  # B, or (geqrf, gesvd, polar) the factors the runtime packs into it: output only
        outs.append(jax.ShapeDtypeStruct((mrows, nrhs), a.dtype))
    if call["w"]:  # syevd's eigenvalues, gesvd's singular values
        outs.append(jax.ShapeDtypeStruct((call["w"],), np.float64 if dtype in ("f64", "c128") else np.float32))
    ffi = jax.ffi.ffi_call(_lib.STORE_TARGET, outs, input_layouts=[_COLMAJOR] * len(ins),
                           output_layouts=[_COLMAJOR if len(o.shape) == 2 else None for o in outs],
                           input_output_aliases=aliases, has_side_effect=True)
    got = ffi(*ins, **attrs)
    return got[0], got[1] if nrhs else None, got[-1] if call["w"] else None
