"""Across processes and nodes under torch.distributed / torchrun: the store
bootstrap on the job's dist.Store, and a solve on each process's own piece
through a collective engine (cusolvermp on GPUs; docs/multinode.md).

    dist.init_process_group("nccl")               # torchrun: one process per GPU
    with muster_torch.distributed.store_set() as s:   # every rank, same order
        x = muster_torch.distributed.solve("potrs", a_cols, b, n=n, store=s)

The ranks meet through the job's store (the one torchrun's rendezvous or
init_process_group made, or any dist.Store passed as store=): no MPI, and
no collective of the process group, so it works with any backend.  A rank
that dies or stops is named by the others within MUSTER_TIMEOUT (its
heartbeat key stops moving).

solve() is eager: this rank passes its column block of A (block layout:
ceil(n / P) columns per rank, rank p's from column p * ceil(n / P)), or
with grid= (mesh_grid's or device_mesh_grid's result) its block of a 1-D or
2-D process grid (the engine takes it as a 2-D block-cyclic piece, no
gather), and all of B, as tensors on its GPU (or the CPU); both are
copied, never written.
Rank 0 chooses among the collective engines (cusolvermp on GPUs), and
when every rank is on this node (sharing its /dev/shm) among the one-node
engines too (cusolvermg, cusolverdn, tiled; lapack for CPU tensors: run
through a group of the set's ranks), as StoreSet.engine() predicts;
provider= forces one.  Where none can run, every rank raises the same
error saying why.

A failed runtime call here (a solve, the set's own calls) raises the
MusterError of its kind as muster_torch's local ops do (MemoryError for a
peer's MUSTER_ENOMEM, TimeoutError, torch.linalg.LinAlgError...), each
also a CallError, a ValueError, as this API raised before: .code, .name
("MUSTER_ENOMEM"), .kind, .info (_lib.store_error; docs/errors.md).
"""
import datetime

import torch
import torch.distributed as dist

from . import _grid, _lib, _runtime, _store

mesh_grid = _grid.mesh_grid
piece_dist = _grid.piece_dist
CallError = _runtime.CallError  # what every failed runtime call here is (module docstring)


class TorchKeyValue(_store.KeyValue):
    """A torch.distributed Store (TCPStore, FileStore, PrefixStore...) as the
    runtime's store."""

    def __init__(self, store):
        self.store = store

    def set(self, key, value):
        self.store.set(key, value)

    def get(self, key, timeout_s):
        if timeout_s > 0:
            try:
                self.store.wait([key], datetime.timedelta(seconds=timeout_s))
            except RuntimeError as e:  # DistStoreError: "Timeout ..." is "not there yet"
                if "timeout" not in str(e).lower():
                    raise
                return None
        elif not self.store.check([key]):
            return None
        return self.store.get(key)

    def delete(self, key):
        self.store.delete_key(key)


def default_store():
    """The store of torch.distributed's default process group (made by
    init_process_group or torchrun's rendezvous).  torch offers it through
    distributed_c10d._get_default_store, a private function; pass store= to
    store_set to use another."""
    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("muster_torch.distributed: no store: call torch.distributed.init_process_group "
                         "first, or pass store= (a torch.distributed Store) with rank= and size=")
    return dist.distributed_c10d._get_default_store()


def store_set(store=None, rank: int | None = None, size: int | None = None,
              timeout: float | None = None) -> _store.StoreSet:
    """This rank's end of a set of `size` ranks over `store` (default: the
    default process group's store, its rank and world size).  Every rank
    must open its sets in the same order (their names count them).
    timeout: how long a silent peer is waited for (default MUSTER_TIMEOUT).
    rank: this rank in the set; a grid whose places are not in process
    group order needs its grid rank (grid["procs"][dist.get_rank()]["rank"]:
    solve(grid=) says so)."""
    if store is None:
        store = default_store()
    if rank is None or size is None:
        if not dist.is_initialized():
            raise ValueError("muster_torch.distributed.store_set: rank= and size= are needed without "
                             "init_process_group")
        # rank= alone: a grid rank other than the process group's (solve's grid=)
        rank = dist.get_rank() if rank is None else rank
        size = dist.get_world_size() if size is None else size
    return _store.StoreSet(_lib.runtime(), TorchKeyValue(store), _store.next_name("torch"), rank, size,
                           timeout_s=timeout or 0, local_device=_local_device, error=_lib.store_error)


def _local_device() -> int:
    """torch's current CUDA device (StoreSet.engine()'s default: where this
    rank's GPU pieces are); 0 without CUDA."""
    return torch.cuda.current_device() if torch.cuda.is_available() else 0


_DTYPES = {torch.float64: "f64", torch.float32: "f32", torch.complex64: "c64", torch.complex128: "c128"}
_WHO = "muster_torch.distributed.solve"


def device_mesh_grid(mesh, placements, n: int) -> dict:
    """mesh_grid of an n x n A laid on a DeviceMesh as a DTensor with
    `placements` (one per mesh dimension): Shard(0) puts A's rows over
    that dimension, Shard(1) its columns, Replicate only on a dimension of
    size 1.  With it, `A.to_local()` on each rank is its grid piece:
    DTensor's split (torch.chunk: ceil(n / k) each, the last shorter) is
    the grid's.  A's rows or columns over two mesh dimensions are
    refused: DTensor splits them one dimension after the other, which
    differs from the grid's single split when n does not divide."""
    from torch.distributed.tensor import Replicate, Shard
    names = mesh.mesh_dim_names or tuple(f"dim{i}" for i in range(mesh.ndim))
    if len(placements) != mesh.ndim:
        raise ValueError(f"device_mesh_grid: {len(placements)} placements for a mesh of {mesh.ndim} dimensions")
    axes = ([], [])
    for name, size, p in zip(names, mesh.mesh.shape, placements):
        if type(p) is Shard and p.dim in (0, 1, -1, -2):
            axes[p.dim % 2].append(name)
        elif not (isinstance(p, Replicate) and size == 1):
            raise ValueError(f"device_mesh_grid: placement {p} on mesh dimension {name!r} of size {int(size)}: "
                             f"each takes Shard(0) (A's rows), Shard(1) (its columns), or Replicate on size 1 "
                             f"(the engines take each entry of A on one process)")
    if len(axes[0]) > 1 or len(axes[1]) > 1:
        raise ValueError(f"device_mesh_grid: A's rows over {axes[0]}, its columns over {axes[1]}: one mesh "
                         f"dimension each at most (DTensor's nested split is not the grid's)")
    spec = tuple(a[0] if a else None for a in axes)
    return mesh_grid(names, [int(s) for s in mesh.mesh.shape], mesh.mesh.flatten().tolist(), spec, n)


def _piece(x, dtype):
    """A column-major copy of x as a (cols x rows) row-major tensor."""
    return x.to(dtype).t().contiguous()


def _layout(a, b, n, store, grid, rows_a=None):
    """(rows, cols, col0, dist) of this rank's piece (_grid.place's, or
    the block layout without grid: rows_a rows, n by default), its
    arguments checked: ValueError after failing the set for every rank, so
    that none waits for this one."""
    try:
        if grid is None:
            col0, ncols = _runtime.block_cols(_lib.runtime(), n, store.size, store.rank)
            rows, cols, d = n if rows_a is None else rows_a, ncols, None
            where = f" (columns {col0}..{col0 + ncols - 1} of the block layout over {store.size} ranks)"
        else:
            me = _grid_proc(store)
            rows, cols, col0, d = _grid.place(grid, n, me, store.rank, _WHO)
            e = grid["procs"][me]
            where = (f" (process {me}'s place in the {grid['nprow']} x {grid['npcol']} grid: rows "
                     f"{e['rows'][0]}.., columns {e['cols'][0]}..)")
        _grid.check_shape("this rank's piece of A", a.shape, (rows, cols), _WHO, where)
        if b is not None:  # its shape: _store.call_shape
            if b.device != a.device:
                raise ValueError(f"{_WHO}: B is on {b.device}, the piece of A on {a.device}")
    except ValueError as e:
        store.refuse(f"rank {store.rank}: {e}")
    return rows, cols, col0, d


def _grid_proc(store) -> int:
    """This process's id in a grid's processes: its rank in the default
    process group (DeviceMesh's numbering), else its rank in the set."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else store.rank


def solve(routine: str, a_piece: torch.Tensor, b: torch.Tensor | None = None, *, n: int,
          store: _store.StoreSet, provider: str | None = None, no_vectors: bool = False,
          grid: dict | None = None, m: int | None = None, full_matrices: bool = False):
    """One solve over every rank of `store`, each passing its own piece.

    Args:
      routine: "potrs", "getrs" (b given: returns X, n x nrhs), "syevd"
        (returns (w, this rank's piece of the eigenvectors, shaped as
        a_piece)), "gels" (A m x n, m >= n, b m x nrhs: returns the
        least-squares X, n x nrhs), or the factorizations of an m x n A,
        tall or wide, where the factor shaped like A comes back as this
        rank's piece (cut as A was) and the others whole
        (docs/multinode.md): "geqrf" (returns (Q, R)), "gesvd" (returns
        (U, S, V^H), or S alone with no_vectors), "polar" (returns (U_p,
        H), A = U_p H).
      a_piece: this rank's piece of A, on its GPU or the CPU: without grid
        its columns (m x ncols, block layout); with grid (mesh_grid's or
        device_mesh_grid's result; potrs, getrs, syevd) its block of the
        grid (rows x cols of grid["procs"][dist.get_rank()]): a 2-D grid's
        block goes to the engine as it is (muster_solve_comm_dist, no
        gather).
      b: all of B (n x nrhs, or n; gels m rows), on the same device.
      n: A's columns (its order when square).  m: A's rows (gels, geqrf,
        gesvd, polar; default n).  store: from store_set().  provider:
        force one.  full_matrices: geqrf's complete Q (m x m) and R (m x
        n), gesvd's full U and V^H (default: the thin ones).

    A piece of the wrong shape, a grid for another n, or a set rank that
    is not the grid's raises ValueError on this rank and fails the set for
    the others (they raise naming this rank).  A copy of this rank's piece
    that fails (a GPU short of memory) raises its own error here and
    fails this call on the others at once, naming this rank
    (StoreSet.fail_call); the set stays usable.
    """
    lib = _lib.runtime()
    dtype = a_piece.dtype if a_piece.dtype in _DTYPES else torch.float64
    try:
        call = _store.call_shape(lib, _WHO, routine, n, m, None if b is None else tuple(b.shape), full_matrices,
                                 no_vectors, grid)
    except ValueError as e:
        store.refuse(f"rank {store.rank}: {e}")
    rows, ncols, col0, dist_fields = _layout(a_piece, b, n, store, grid, call["m"])
    try:
        args, shard, (a, bb, w) = _copies(lib, call, routine, a_piece, b, n, dtype, provider, rows, ncols, col0)
    except Exception as e:  # a copy failed (a GPU short of memory): the others must not wait for this rank
        store.fail_call(e)
        raise
    store.solve(args, shard, None if dist_fields is None else _runtime.Dist(**dist_fields))
    return _returns(routine, call, a, bb, w, n)


def _copies(lib, call: dict, routine: str, a_piece, b, n: int, dtype, provider, rows: int, ncols: int,
            col0: int):
    """This rank's column-major copies of its piece of A, of B (or the B
    the runtime packs factors into) and W, where A is: (args, shard, (A's,
    B's and W's tensors, kept alive))."""
    a = _piece(a_piece, dtype)
    nrhs, mrows = call["nrhs"], call["m"]
    bb = _piece(b.reshape(mrows, nrhs), dtype) if b is not None else \
        torch.zeros(nrhs, mrows, dtype=dtype, device=a.device) if nrhs else None  # the factors' B
    cuda = a.is_cuda
    w = torch.zeros(call["w"], dtype=dtype.to_real() if dtype.is_complex else dtype, device=a.device) \
        if call["w"] else None
    args = _runtime.SolveArgs(routine=_runtime.enum_value(lib, "routine", routine),
                              dtype=_runtime.enum_value(lib, "dtype", _DTYPES[dtype]), n=n, nrhs=nrhs,
                              layout=_runtime.LAYOUT_BLOCK, flags=call["flags"],
                              provider=provider.encode() if provider else None)
    shard = _runtime.Shard(mem=_runtime.MEM_CUDA if cuda else _runtime.MEM_HOST,
                           device=a.device.index if cuda else -1, a=a.data_ptr(), lda=max(1, rows), col0=col0,
                           ncols=ncols, b=bb.data_ptr() if nrhs else None, ldb=mrows,
                           w=w.data_ptr() if w is not None else None,
                           stream=torch.cuda.current_stream(a.device).cuda_stream if cuda else None)
    return args, shard, (a, bb, w)


def _returns(routine: str, call: dict, a, bb, w, n: int):
    """solve()'s return from this rank's copies of A (its piece), B (the
    runtime packed the factors there, column-major) and W."""
    if routine == "syevd":
        return w, a.t()
    if call["outputs"] is not None:
        flat = None if bb is None else bb.reshape(-1)
        return _store.factor_returns(routine, call["outputs"], a.t(),
                                     lambda r, c, off: flat[off:off + r * c].reshape(c, r).t(), w)
    return bb.t()[:n]
