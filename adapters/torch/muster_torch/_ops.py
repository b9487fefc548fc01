"""The torch.library custom ops and their fake (meta) implementations.

  muster::potrs(Tensor[] a, Tensor b, str group, int rank, int nranks,
                int tile, str provider, float timeout) -> Tensor
  muster::potri(Tensor[] a, ...same...) -> Tensor[]
  muster::syevd(Tensor[] a, bool vectors, ...same...) -> (Tensor, Tensor[])
  muster::potrs_logdet(...as potrs...) -> (Tensor x, Tensor logdet)
  muster::getrs(...as potrs...) -> Tensor
  muster::gels(Tensor[] a, Tensor b, int n, str group, ...) -> Tensor

`a` is every column block of A (group == "": one process holds them all,
muster_solve_all) or this rank's one block (group != "": rank `rank` of
`nranks`, muster_solve_named).  gels's A is m x n (m >= n,
the shards' rows m): its n is an argument because a rank holding one
block cannot tell it, and the fake implementation needs it for X's shape.  Results are fresh tensors in
column-major layout (as torch.linalg returns them); inputs never change
(mutates_args=()).  The fake implementations return tensors of the same
shapes, strides, dtypes and devices, so meta tensors, torch.compile and
torch.library.opcheck work.  Derivatives: _grad.py.
"""
import torch

from . import _buffers, _solve
from ._solve import Request


def _col_major(rows, cols, dtype, device):
    return torch.empty((cols, rows), dtype=dtype, device=device).mT


def _fake_x(req):
    """X's fake: n x nrhs column-major on b's device, (n,) for a vector b."""
    _, n, _, nrhs = req.check()
    x = _col_major(n, nrhs, req.b.dtype, req.b.device)
    return x[:, 0] if req.b.dim() == 1 else x


@torch.library.custom_op("muster::potrs", mutates_args=())
def potrs_op(a: list[torch.Tensor], b: torch.Tensor, group: str, rank: int, nranks: int,
             tile: int, provider: str, timeout: float) -> torch.Tensor:
    return _solve.solve(Request("potrs", a, group, rank, nranks, tile, provider, timeout, b=b))


@potrs_op.register_fake
def _(a, b, group, rank, nranks, tile, provider, timeout):
    return _fake_x(Request("potrs", a, group, rank, nranks, b=b))


@torch.library.custom_op("muster::potrs_logdet", mutates_args=())
def potrs_logdet_op(a: list[torch.Tensor], b: torch.Tensor, group: str, rank: int,
                    nranks: int, tile: int, provider: str,
                    timeout: float) -> tuple[torch.Tensor, torch.Tensor]:
    return _solve.solve(Request("potrs", a, group, rank, nranks, tile, provider, timeout, b=b,
                                logdet=True))


@potrs_logdet_op.register_fake
def _(a, b, group, rank, nranks, tile, provider, timeout):
    x = _fake_x(Request("potrs", a, group, rank, nranks, b=b))
    return x, torch.empty((), dtype=_buffers.real_dtype(b.dtype), device=b.device)


@torch.library.custom_op("muster::getrs", mutates_args=())
def getrs_op(a: list[torch.Tensor], b: torch.Tensor, group: str, rank: int, nranks: int,
             tile: int, provider: str, timeout: float) -> torch.Tensor:
    return _solve.solve(Request("getrs", a, group, rank, nranks, tile, provider, timeout, b=b))


@getrs_op.register_fake
def _(a, b, group, rank, nranks, tile, provider, timeout):
    return _fake_x(Request("getrs", a, group, rank, nranks, b=b))


@torch.library.custom_op("muster::gels", mutates_args=())
def gels_op(a: list[torch.Tensor], b: torch.Tensor, n: int, group: str, rank: int,
            nranks: int, tile: int, provider: str, timeout: float) -> torch.Tensor:
    return _solve.solve(Request("gels", a, group, rank, nranks, tile, provider, timeout, b=b,
                                ncols=n))


@gels_op.register_fake
def _(a, b, n, group, rank, nranks, tile, provider, timeout):
    return _fake_x(Request("gels", a, group, rank, nranks, b=b, ncols=n))


@torch.library.custom_op("muster::potri", mutates_args=())
def potri_op(a: list[torch.Tensor], group: str, rank: int, nranks: int, tile: int,
             provider: str, timeout: float) -> list[torch.Tensor]:
    return _solve.potri(Request("potri", a, group, rank, nranks, tile, provider, timeout))


@potri_op.register_fake
def _(a, group, rank, nranks, tile, provider, timeout):
    _, n, dtype, _ = Request("potri", a, group, rank, nranks).check()
    return [_col_major(n, t.shape[1], dtype, t.device) for t in a]


@torch.library.custom_op("muster::syevd", mutates_args=())
def syevd_op(a: list[torch.Tensor], vectors: bool, group: str, rank: int, nranks: int,
             tile: int, provider: str, timeout: float) -> tuple[torch.Tensor, list[torch.Tensor]]:
    return _solve.syevd(Request("syevd", a, group, rank, nranks, tile, provider, timeout,
                                vectors=vectors))


@syevd_op.register_fake
def _(a, vectors, group, rank, nranks, tile, provider, timeout):
    _, n, dtype, _ = Request("syevd", a, group, rank, nranks).check()
    w = torch.empty((n,), dtype=_buffers.real_dtype(dtype), device=a[0].device)
    return w, ([_col_major(n, t.shape[1], dtype, t.device) for t in a] if vectors else [])
