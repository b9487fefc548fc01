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
ceil(n / P) columns per rank, rank p's from column p * ceil(n / P)) and all
of B, as tensors on its GPU (or the CPU); both are copied, never written.
Rank 0 chooses among the collective engines (provider= forces one); where
none can run, every rank raises the same ValueError saying why.
"""
import datetime

import torch
import torch.distributed as dist

from . import _grid, _lib, _runtime, _store

mesh_grid = _grid.mesh_grid


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
    timeout: how long a silent peer is waited for (default MUSTER_TIMEOUT)."""
    if store is None:
        store = default_store()
    if rank is None or size is None:
        if not dist.is_initialized():
            raise ValueError("muster_torch.distributed.store_set: rank= and size= are needed without "
                             "init_process_group")
        rank, size = dist.get_rank(), dist.get_world_size()
    return _store.StoreSet(_lib.runtime(), TorchKeyValue(store), _store.next_name("torch"), rank, size,
                           timeout_s=timeout or 0)


_DTYPES = {torch.float64: "f64", torch.float32: "f32", torch.complex64: "c64", torch.complex128: "c128"}


def _piece(x, dtype, rows, cols):
    """A column-major copy of x (rows x cols) as a (cols x rows) row-major tensor."""
    return x.reshape(rows, cols).to(dtype).t().contiguous()


def solve(routine: str, a_cols: torch.Tensor, b: torch.Tensor | None = None, *, n: int,
          store: _store.StoreSet, provider: str | None = None, no_vectors: bool = False):
    """One solve over every rank of `store`, each passing its own piece.

    Args:
      routine: "potrs", "getrs" (b given: returns X, n x nrhs) or "syevd"
        (returns (w, this rank's columns of the eigenvectors)).
      a_cols: this rank's columns of A (n x ncols, block layout), on its GPU
        or the CPU.  b: all of B (n x nrhs), on the same device.
      n: A's order.  store: from store_set().  provider: force one.
    """
    lib = _lib.runtime()
    dtype = a_cols.dtype if a_cols.dtype in _DTYPES else torch.float64
    col0, ncols = _runtime.block_cols(lib, n, store.size, store.rank)
    a = _piece(a_cols, dtype, n, ncols)
    nrhs = 0 if b is None else (b.shape[1] if b.dim() == 2 else 1)
    bb = _piece(b, dtype, n, nrhs) if nrhs else None
    cuda = a.is_cuda
    w = torch.zeros(n, dtype=dtype.to_real() if dtype.is_complex else dtype, device=a.device) \
        if routine == "syevd" else None
    args = _runtime.SolveArgs(routine=_runtime.enum_value(lib, "routine", routine),
                              dtype=_runtime.enum_value(lib, "dtype", _DTYPES[dtype]), n=n, nrhs=nrhs,
                              layout=_runtime.LAYOUT_BLOCK, flags=_runtime.NO_VECTORS if no_vectors else 0,
                              provider=provider.encode() if provider else None)
    shard = _runtime.Shard(mem=_runtime.MEM_CUDA if cuda else _runtime.MEM_HOST,
                           device=a.device.index if cuda else -1, a=a.data_ptr(), lda=n, col0=col0, ncols=ncols,
                           b=bb.data_ptr() if nrhs else None, ldb=n, w=w.data_ptr() if w is not None else None,
                           stream=torch.cuda.current_stream(a.device).cuda_stream if cuda else None)
    store.solve(args, shard)
    if routine == "syevd":
        return w, a.t()
    return bb.t()
