"""One solve through libmuster, for the ops' real (non-fake) implementations.

Two ways to call the runtime (include/muster.h, docs/solve.md):
  * group == "": this process holds every shard (a list of column blocks,
    one per device or CPU "rank"): muster_solve_all, no rendezvous;
  * group != "": this process is rank `rank` of `nranks` and holds one
    shard: muster_solve_named (join, solve, leave).  A rank whose own
    inputs are wrong calls muster_abort_named instead, so peers already
    waiting fail at once with its message instead of timing out.
Every call copies the inputs into work buffers (_buffers.py) and returns
fresh tensors; the caller's tensors never change.
"""
import ctypes

import torch

from . import _buffers, _checks, _lib, _runtime
from ._buffers import host_pool, ptr

LOGDET = 0x4  # MUSTER_LOGDET (include/muster.h; test_runtime_abi.py checks it)


TAKES_B = ("potrs", "getrs", "gels")  # the routines with right-hand sides


class Request:
    """What one call solves, as the ops received it.  ncols: gels's n (A is
    m x n); None for the square routines.  logdet: potrs also returns
    log det A (MUSTER_LOGDET)."""

    def __init__(self, routine, a, group="", rank=0, nranks=0, tile=0, provider="",
                 timeout=0.0, b=None, vectors=True, ncols=None, logdet=False):
        self.routine, self.a, self.b, self.vectors = routine, list(a), b, vectors
        self.group, self.rank, self.tile = group, rank, tile
        self.nranks = nranks if group else len(self.a)
        self.provider, self.timeout = provider, timeout
        self.ncols, self.logdet = ncols, logdet

    def who(self) -> str:
        if self.group:
            return (f"muster_torch.{self.routine} (group {self.group}, rank {self.rank} of "
                    f"{self.nranks})")
        return f"muster_torch.{self.routine} ({self.nranks} ranks in this process)"

    def check(self):
        """The Python-side checks (_checks.py); returns (m, n, dtype, nrhs):
        A is m x n (m = n but for gels)."""
        _checks.process_args(self.routine, self.a, self.group, self.rank, self.nranks)
        m, dtype = _checks.shards(self.routine, self.a, whole=not self.group, ncols=self.ncols)
        n = m if self.ncols is None else self.ncols
        nrhs = _checks.rhs(self.routine, self.b, m, n, dtype) if self.routine in TAKES_B else 0
        return m, n, dtype, nrhs

    def col0s(self, n):
        """First global column of each shard this process holds."""
        if self.group:
            return [_runtime.block_cols(_lib.runtime(), n, self.nranks, self.rank)[0]]
        starts, c = [], 0
        for t in self.a:
            starts.append(c)
            c += t.shape[1]
        return starts


class _Rank:
    """One rank's work buffers and its muster_shard_t."""

    def __init__(self, req, t, col0, m, dtype, nrhs):
        pooled = bool(req.group) and t.device.type == "cpu"

        def buf(role, shape, dt):
            if pooled:
                return host_pool.view(req.group, role, shape, dt)
            return torch.empty(shape, dtype=dt, device=t.device)

        self.pooled, self.device = pooled, t.device
        self.a = _buffers.column_major(t, buf("a", (t.shape[1], m), dtype))
        self.b = self.w = None
        if req.routine in TAKES_B:
            b2 = req.b if req.b.dim() == 2 else req.b[:, None]
            self.b = _buffers.column_major(b2.to(t.device), buf("b", (nrhs, m), dtype))
        if req.routine == "syevd" or req.logdet:  # eigenvalues, or the one log det
            self.w = buf("w", (m if req.routine == "syevd" else 1,), _buffers.real_dtype(dtype))
        cuda = t.device.type == "cuda"
        self.shard = _runtime.Shard(
            mem=_runtime.MEM_CUDA if cuda else _runtime.MEM_HOST,
            device=t.device.index if cuda else -1, a=ptr(self.a), lda=m, col0=col0,
            ncols=t.shape[1], b=ptr(self.b), ldb=m, w=ptr(self.w),
            stream=_buffers.stream_of(t.device))

    def out(self, x):
        """A result buffer as a tensor of the caller's: pooled memory is copied out."""
        return x.clone() if self.pooled else x


def _args(req, n, dtype, nrhs):
    # the solves never return A's factors: providers may factor in place
    flags = _runtime.NO_FACTOR if req.routine in TAKES_B else 0
    if req.routine == "syevd" and not req.vectors:
        flags |= _runtime.NO_VECTORS
    if req.logdet:
        flags |= LOGDET
    return _runtime.SolveArgs(
        routine=_runtime.enum_value(_lib.runtime(), "routine", req.routine),
        dtype=_buffers.muster_dtype(dtype), n=n, nrhs=max(nrhs, 1), tile=req.tile,
        layout=_runtime.LAYOUT_BLOCK, flags=flags,
        provider=req.provider.encode() if req.provider else None)


def _who(req, device=-1):
    """This rank's muster_named_t."""
    return _runtime.Named(group=req.group.encode(), rank=req.rank, nranks=req.nranks, job=None,
                          timeout_s=req.timeout, device=device, tag=0, n=0)


def _abort_peers(req, e: Exception):
    """Abort the group with this rank's failure (muster_abort_named), so
    that waiting peers fail at once (with the same kind of error) instead
    of timing out."""
    if isinstance(e, _lib.MusterError):
        code = e.code
    elif isinstance(e, (TypeError, ValueError)):
        code = _runtime.EINVAL
    else:
        code = _runtime.ENOMEM if isinstance(e, MemoryError) else _runtime.EPOISONED
    why = f"rank {req.rank}: {type(e).__name__}: {e}".encode()[:900]
    _lib.runtime().muster_abort_named(ctypes.byref(_who(req)), code, why)


def _call(req, args, ranks):
    """Run the solve; raises the mapped exception on failure."""
    lib, res = _lib.runtime(), _runtime.new_result()
    if not req.group:
        arr = (_runtime.Shard * len(ranks))(*[r.shard for r in ranks])
        rc = lib.muster_solve_all(ctypes.byref(args), len(ranks), arr, ctypes.byref(res))
    else:
        me = ranks[0]
        who = _who(req, me.shard.device)
        rc = lib.muster_solve_named(ctypes.byref(who), ctypes.byref(args), ctypes.byref(me.shard),
                                    ctypes.byref(res))
    if rc:
        raise _lib.error(rc, req.who(), res.info)
    return res


def run(req: Request):
    """Check, copy in, solve, and return the ranks (their buffers hold the results)."""
    try:
        m, n, dtype, nrhs = req.check()
        ranks = [_Rank(req, t, c0, m, dtype, nrhs) for t, c0 in zip(req.a, req.col0s(n))]
        args = _args(req, n, dtype, nrhs)
    except Exception as e:  # before the rendezvous: tell the peers, do not let them wait
        if req.group:
            _abort_peers(req, e)
        raise
    _call(req, args, ranks)
    return ranks


def solve(req: Request):
    """potrs, getrs, gels: X (n x nrhs, or (n,) for a vector b) on b's
    device, column-major; with req.logdet, (X, log det A) instead."""
    ranks = run(req)
    src = next((r for r in ranks if r.device == req.b.device), ranks[0])
    n, nrhs = req.ncols or req.b.shape[0], src.b.shape[0]
    x = torch.empty((nrhs, n), dtype=req.b.dtype, device=req.b.device).mT
    x.copy_(src.b.mT[:n])  # gels: X is B's first n rows
    x = x[:, 0] if req.b.dim() == 1 else x
    if not req.logdet:
        return x
    return x, src.w[0].clone().to(req.b.device)


def potri(req: Request) -> list[torch.Tensor]:
    """The column blocks of A^-1 this process holds, each on its shard's device."""
    return [r.out(r.a.mT) for r in run(req)]


def syevd(req: Request):
    """(eigenvalues, eigenvector column blocks); no blocks for vectors=False.
    The eigenvalues are on the first shard's device."""
    ranks = run(req)
    w = ranks[0].out(ranks[0].w)
    return w, ([r.out(r.a.mT) for r in ranks] if req.vectors else [])
