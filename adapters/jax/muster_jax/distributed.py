"""Across processes and nodes under jax.distributed: the store bootstrap on
jax's key-value store, and a solve on each process's own piece through a
collective engine (cusolvermp on GPUs; docs/multinode.md).

    jax.distributed.initialize(...)              # one process per GPU
    with muster_jax.distributed.store_set() as s:    # every process, same order
        x = muster_jax.distributed.solve("potrs", a_cols, b, n=n, store=s)

The processes meet through jax's distributed client (the coordination
service jax.distributed.initialize started): no MPI, no launcher of
muster's.  A rank that dies or stops is named by the others within
MUSTER_TIMEOUT (its heartbeat key stops moving), as over MPI.

solve() runs eagerly, or inside jax.jit as one XLA FFI custom call whose
handler makes the same collective solve on XLA's buffers (_dist_jit.py;
the StoreSet must stay open while the compiled function is called).  This
process passes its column block of
A (block layout: ceil(n / P) columns per process, process p's from column
p * ceil(n / P)), or with grid= (mesh_grid's result) its block of a 1-D or
2-D mesh (P("pr", "pc"): the engine takes it as a 2-D block-cyclic piece,
no gather), and all of B; A and B are copied, never written.  The
engine is chosen by rank 0 among the collective providers (cusolvermp for
GPU arrays, when it can run), and when every process is on this node
(sharing its /dev/shm) among the one-node engines too (cusolvermg,
cusolverdn, tiled on GPUs, lapack on host arrays: run through a group of
the set's processes), as engine() predicts; provider= forces one.  Where
nothing can run, every process raises the same ValueError saying why
(`provider cusolvermp is unavailable: probe: ...`).

A failed runtime call here (an eager solve, the set's own calls) raises
CallError, a ValueError carrying .code (the MUSTER_E* value), .name
("MUSTER_ENOMEM"), .kind ("resource_exhausted") and .info
(docs/errors.md); the same code on every process of a failed solve.
"""
import functools

import jax
import numpy as np

from . import _dist_jit, _grid, _lib, _runtime, _store

mesh_grid = _grid.mesh_grid
piece_dist = _grid.piece_dist
CallError = _runtime.CallError  # what every failed runtime call here is (module docstring)


class JaxKeyValue(_store.KeyValue):
    """jax.distributed's key-value client as the runtime's store."""

    def __init__(self, client=None):
        if client is None:
            from jax._src import distributed  # the client jax.distributed.initialize made
            client = distributed.global_state.client
        if client is None:
            raise ValueError("muster_jax.distributed: jax.distributed.initialize() has not run in this "
                             "process (its key-value store is how the processes meet)")
        self.client = client

    def set(self, key, value):
        self.client.key_value_set_bytes(key, value, allow_overwrite=True)

    def get(self, key, timeout_s):
        try:
            if timeout_s <= 0:
                return self.client.key_value_try_get_bytes(key)
            return self.client.blocking_key_value_get_bytes(key, max(1, int(timeout_s * 1000)))
        except Exception as e:  # noqa: BLE001 - jaxlib's error type is not public
            if "NOT_FOUND" in str(e) or "DEADLINE_EXCEEDED" in str(e):
                return None
            raise

    def delete(self, key):
        self.client.key_value_delete(key)


def store_set(timeout: float | None = None, client=None, rank: int | None = None) -> _store.StoreSet:
    """This process's end of a set of every process of the job
    (jax.process_index() of jax.process_count()) over jax's store.  Every
    process must open its sets in the same order (their names count them).
    timeout: how long a silent peer is waited for (default MUSTER_TIMEOUT).
    rank: this process's rank in the set (default jax.process_index()); a
    2-D mesh whose positions are not in process order needs its grid's
    rank (mesh_grid(...)["procs"][jax.process_index()]["rank"])."""
    return _store.StoreSet(_lib.runtime(), JaxKeyValue(client), _store.next_name("jax"),
                           jax.process_index() if rank is None else rank, jax.process_count(),
                           timeout_s=timeout or 0, local_device=_local_device)


def _local_device() -> int:
    """The CUDA ordinal of this process's first device (StoreSet.engine()'s
    default: where a GPU piece of this process is)."""
    return jax.local_devices()[0].local_hardware_id or 0


def clear_failure() -> None:
    """Forget the error a failed jitted solve left behind in JAX's runtime
    tokens.  The solve's custom call has a side effect, so JAX keeps, per
    device, the token of the last computation with one, and
    jax.effects_barrier() raises that computation's error again, as does
    jax.distributed.shutdown() and so JAX's own exit hook (the process then
    ends with a traceback), until another computation with a side effect
    runs on the device.  After catching a jitted solve's JaxRuntimeError,
    call this from the thread that ran it (the tokens are per thread): it
    runs an empty custom call with a side effect (muster_jax_nothing,
    adapters/jax/ffi.c) on each of this process's devices; nothing
    collective."""
    for d in jax.local_devices():
        with jax.default_device(d):
            _nothing()()
    jax.effects_barrier()


@functools.cache
def _nothing():
    """clear_failure()'s compiled empty call, made once (its target
    registered first): a new callable each time would be traced and
    compiled again at every call."""
    _lib.runtime()
    return jax.jit(jax.ffi.ffi_call(_lib.NOTHING_TARGET, (), has_side_effect=True))


def _piece(x, dtype, rows, cols):
    """(buffer kept alive, pointer, mem, device) of a fresh column-major copy of x."""
    if isinstance(x, jax.Array) and x.devices() and next(iter(x.devices())).platform == "gpu":
        dev = next(iter(x.devices()))
        buf = jax.numpy.array(x.reshape(rows, cols).T, dtype=dtype, copy=True).block_until_ready()
        return buf, buf.unsafe_buffer_pointer(), _runtime.MEM_CUDA, dev.local_hardware_id
    buf = np.asfortranarray(np.asarray(x, dtype=dtype).reshape(rows, cols)).copy(order="F")
    return buf, buf.ctypes.data, _runtime.MEM_HOST, -1


def _back(buf, rows, cols):
    """A column-major copy made by _piece, as an array of shape (rows, cols)."""
    return buf.T if isinstance(buf, jax.Array) else buf


def _place(n: int, store: _store.StoreSet, grid, a_piece, m: int | None = None):
    """(rows, cols, col0, dist) of this process's piece: a column block
    (grid None or 1-D: dist None; m rows, n by default), or its grid's 2-D
    block (a _runtime.Dist); a wrong grid or piece fails the set for every
    process (StoreSet.refuse)."""
    who = "muster_jax.distributed.solve"
    try:
        if grid is None:
            col0, ncols = _runtime.block_cols(_lib.runtime(), n, store.size, store.rank)
            rows, d = n if m is None else m, None
        else:
            rows, ncols, col0, d = _grid.place(grid, n, jax.process_index(), store.rank, who)
        _grid.check_shape("this process's piece of A", np.shape(a_piece), (rows, ncols), who)
    except ValueError as e:
        store.refuse(f"rank {store.rank}: {e}")
    return rows, ncols, col0, None if d is None else _runtime.Dist(**d)


def solve(routine: str, a_piece, b=None, *, n: int, store: _store.StoreSet, provider: str | None = None,
          dtype="f64", no_vectors: bool = False, grid: dict | None = None, m: int | None = None,
          full_matrices: bool = False):
    """One solve over every process of `store`, each passing its own piece.

    Args:
      routine: "potrs", "getrs" (B given: returns X, n x nrhs), "syevd"
        (returns (w, this process's piece of the eigenvectors)), "gels"
        (A m x n, m >= n, B m x nrhs: returns the least-squares X, n x
        nrhs), or the factorizations of an m x n A, tall or wide, where
        the factor shaped like A comes back as this process's piece (cut
        as A was) and the others whole (docs/multinode.md): "geqrf"
        (returns (Q, R)), "gesvd" (returns (U, S, V^H), or S alone with
        no_vectors), "polar" (returns (U_p, H), A = U_p H).
      a_piece: this process's piece of A: without grid its columns (m x
        ncols, block layout); with grid (mesh_grid's result; potrs, getrs,
        syevd) its block of the mesh, as the mesh cuts A (rows x cols of
        grid["procs"][me]): a 2-D mesh's block goes to the engine as it is
        (no gather).
      b: all of B (n x nrhs, gels m x nrhs), the same on every process.
      n: A's columns (its order when square).  m: A's rows (gels, geqrf,
        gesvd, polar; default n).  store: from store_set().  provider:
        force one.  full_matrices: geqrf's complete Q (m x m) and R (m x
        n), gesvd's full U and V^H (default: the thin ones).
      Inside jax.jit every routine runs, with the eager form's arguments,
        shapes and refusals (grid= only for potrs, getrs, syevd, as eagerly).
    """
    lib = _lib.runtime()
    try:  # the same arguments refused the same way eagerly and when tracing, before any communication
        call = _store.call_shape(lib, "muster_jax.distributed.solve", routine, n, m, None if b is None else np.shape(b),
                                 full_matrices, no_vectors, grid)
    except ValueError as e:
        store.refuse(f"rank {store.rank}: {e}")
    if _dist_jit.traced(a_piece, b):  # inside jax.jit: one FFI custom call on XLA's buffers, shapes from `call`
        a_back, b_back, w = _dist_jit.solve(_place, call, routine, a_piece, b, n=n, store=store, provider=provider,
                                            dtype=dtype, grid=grid)
        return _returns(routine, call, a_back, b_back, w, n)
    rows, ncols, col0, dist = _place(n, store, grid, a_piece, call["m"])
    try:
        args, shard, kept = _copies(lib, call, routine, a_piece, b, n, dtype, provider, rows, ncols, col0)
    except Exception as e:  # a copy failed (a GPU short of memory): the others must not wait for this rank
        with _dist_jit.held(store):
            store.fail_call(e)
        raise
    with _dist_jit.held(store):  # never beside a jitted solve on the same set
        store.solve(args, shard, dist)
    a_buf, b_buf, w = kept
    return _returns(routine, call, _back(a_buf, rows, ncols), None if b_buf is None else _back(b_buf, call["m"],
                    call["nrhs"]), w, n)


def _copies(lib, call: dict, routine: str, a_piece, b, n: int, dtype: str, provider, rows: int, ncols: int,
            col0: int):
    """The eager solve's column-major copies of this process's piece of A,
    of B (or the B the runtime packs factors into) and W, where A is: (args,
    shard, (A's, B's and W's buffers, kept alive))."""
    nptype = _dist_jit.NPTYPES[dtype]
    a_buf, a_ptr, mem, dev = _piece(a_piece, nptype, rows, ncols)
    nrhs, mrows = call["nrhs"], call["m"]
    b_buf, b_ptr = None, None
    if b is not None:
        b_buf, b_ptr, _, _ = _piece(b, nptype, mrows, nrhs)
    elif nrhs:  # the factors the runtime packs into B
        b_buf, b_ptr, _, _ = _piece(np.zeros((mrows, nrhs), nptype), nptype, mrows, nrhs)
        if mem == _runtime.MEM_CUDA:
            b_buf = jax.device_put(b_buf.T, next(iter(a_buf.devices()))).block_until_ready()
            b_ptr = b_buf.unsafe_buffer_pointer()
    w = None
    if call["w"]:  # W where A is: the GPU's memory for GPU arrays
        w = np.zeros(call["w"], dtype=np.float64 if dtype in ("f64", "c128") else np.float32)
        if mem == _runtime.MEM_CUDA:
            w = jax.device_put(w, next(iter(a_buf.devices()))).block_until_ready()
    w_ptr = None if w is None else w.unsafe_buffer_pointer() if isinstance(w, jax.Array) else w.ctypes.data
    args = _runtime.SolveArgs(routine=_runtime.enum_value(lib, "routine", routine),
                              dtype=_runtime.enum_value(lib, "dtype", dtype), n=n, nrhs=nrhs,
                              layout=_runtime.LAYOUT_BLOCK, flags=call["flags"],
                              provider=provider.encode() if provider else None)
    shard = _runtime.Shard(mem=mem, device=dev, a=a_ptr, lda=max(1, rows), col0=col0, ncols=ncols, b=b_ptr,
                           ldb=mrows, w=w_ptr)
    return args, shard, (a_buf, b_buf, w)


def _returns(routine: str, call: dict, a_back, b_back, w, n: int):
    """solve()'s return, eager or jitted, from A's array (this process's
    piece), B's (m x nrhs, column-major in memory: the factors the runtime
    packed there are cut out of its elements in memory order) and W."""
    if routine == "syevd":
        return w, a_back
    if call["outputs"] is not None:
        flat = None if b_back is None else b_back.T.reshape(-1)
        return _store.factor_returns(routine, call["outputs"], a_back,
                                     lambda r, c, off: flat[off:off + r * c].reshape(c, r).T, w)
    return b_back[:n]
