"""The public functions: which way the caller holds its shards, and the
call of the op that fits.

  * a list (or tuple) of column blocks: this process holds every shard of A,
    one per device (cuda:0, cuda:1, ...) or several on the CPU;
  * a tensor and group=<ProcessGroup>: this process is one rank of the
    group and passes its own column block (torchrun);
  * a DTensor sharded on columns (Shard(1)) along one dimension of its
    mesh, replicated along any others: as the previous, with that mesh
    dimension's process group; results are DTensors on the same mesh.
  * a tensor without group=: one shard holding all of A.
"""
import sys

import torch

from . import _dist, _lib, _runtime
from ._ops import gels_op, getrs_op, potri_op, potrs_logdet_op, potrs_op, syevd_op


def _dtensor_api():
    """(DTensor, Replicate, Shard), imported on first need (importing
    torch.distributed.tensor costs about 2 s)."""
    try:
        from torch.distributed.tensor import DTensor, Replicate, Shard
    except ImportError:  # torch < 2.5
        from torch.distributed._tensor import DTensor, Replicate, Shard
    return DTensor, Replicate, Shard


def _is_dtensor(x):
    # a DTensor exists only once its module was imported: no import needed to tell
    mods = (sys.modules.get("torch.distributed.tensor"), sys.modules.get("torch.distributed._tensor"))
    return any(m is not None and isinstance(x, getattr(m, "DTensor", ())) for m in mods)


class _Held:
    """How the caller holds A: the shards passed to the op, the op's group
    arguments, and how to hand results back."""

    def __init__(self, routine, a, group, timeout=None):
        self.dt, self.listed, self.pg = None, isinstance(a, (list, tuple)), group
        if _is_dtensor(a):
            self.dt, mesh_dim = a, _column_mesh_dim(routine, a)
            self.shards = [a.to_local()]
            self.pg = a.device_mesh.get_group(mesh_dim)
            self.group, self.rank, self.nranks = _dist.resolve(self.pg, timeout)
        elif isinstance(a, (list, tuple)):
            if group is not None:
                raise ValueError(f"muster_torch.{routine}: a list of shards is one process "
                                 "holding every shard: no group=")
            self.shards, self.group, self.rank, self.nranks = list(a), "", 0, len(a)
        elif isinstance(a, torch.Tensor):
            self.shards = [a]
            if group is None:
                self.group, self.rank, self.nranks = "", 0, 1
            else:
                self.group, self.rank, self.nranks = _dist.resolve(group, timeout)
        else:
            raise TypeError(f"muster_torch.{routine}: a is a {type(a).__name__}: pass a list "
                            "of column blocks, a torch.Tensor (with group=), or a DTensor")

    def columns(self, timeout=None) -> int:
        """A's global column count: gels's n (its rows are m).  A rank of a
        process group holding one block asks the group (an all_reduce)."""
        if self.dt is not None:
            return self.dt.shape[1]
        if self.listed or not self.group:
            return sum(t.shape[1] for t in self.shards)
        return _dist.total_columns(self.shards[0].shape[1], self.pg, timeout)

    def replicated(self, x):
        """A result every rank holds whole (X, eigenvalues)."""
        if self.dt is None:
            return x
        DTensor, Replicate, _ = _dtensor_api()
        mesh = self.dt.device_mesh
        return DTensor.from_local(x, mesh, [Replicate()] * mesh.ndim, run_check=False)

    def blocks(self, blocks):
        """Results held like A (column blocks)."""
        if self.dt is None:
            return blocks if self.listed else blocks[0]
        n, DTensor = self.dt.shape[0], _dtensor_api()[0]
        return DTensor.from_local(blocks[0].contiguous(), self.dt.device_mesh,
                                  self.dt.placements, run_check=False, shape=self.dt.shape,
                                  stride=(n, 1))


def _column_mesh_dim(routine, a):
    """The mesh dimension a DTensor is column-sharded along."""
    _, Replicate, Shard = _dtensor_api()
    shard = [i for i, p in enumerate(a.placements) if isinstance(p, Shard)]
    ok = len(shard) == 1 and a.placements[shard[0]].dim in (1, -1) and all(
        isinstance(p, Replicate) for i, p in enumerate(a.placements) if i != shard[0])
    if a.dim() != 2 or not ok:
        raise ValueError(f"muster_torch.{routine}: a DTensor must be a matrix sharded on its "
                         f"columns (Shard(1)) along one mesh dimension and replicated along "
                         f"the others, got placements {a.placements}")
    return shard[0]


def _opts(tile, provider, timeout):
    return (int(tile or 0), str(provider or ""), float(timeout or 0.0))


def _local(x):
    return x.to_local() if _is_dtensor(x) else x


def potrs(a, b, *, return_logdet=False, group=None, tile=None, provider=None, timeout=None):
    """Solve A X = B for Hermitian positive definite A held in column blocks.

    Args:
      a: the column blocks of A (module docstring): a list, a tensor with
        group=, or a DTensor.  float32, float64, complex64 or complex128.
      b: B, (n,) or (n, nrhs), the same dtype; every rank passes all of it
        (a DTensor b must be replicated).
      return_logdet: also return log det A (real: float32 for float32 and
        complex64, float64 otherwise), from the Cholesky factor of the same
        call (no second pass over A).
      group: the torch.distributed process group when each process passes
        its own block.
      tile: T_A of the block-cyclic layout the GPU provider works in; None:
        the runtime's choice.
      provider: force a backend ("lapack", "cusolvermg"); None: the best one.
      timeout: seconds to wait for the other ranks; None: $MUSTER_TIMEOUT
        (default 60).

    Returns:
      X, shaped like b, on b's device (every rank gets all of it); (X,
      logdet) with return_logdet, logdet a 0-d tensor on b's device.

    Raises:
      torch.linalg.LinAlgError: A is not positive definite (e.info = k, the
        order of the leading minor), or has NaN/Inf.  TypeError / ValueError:
        dtypes / shapes.  Others by kind: docs/torch.md.
    """
    held = _Held("potrs", a, group, timeout)
    op = potrs_logdet_op if return_logdet else potrs_op
    out = op(held.shards, _local(b), held.group, held.rank, held.nranks,
             *_opts(tile, provider, timeout))
    if return_logdet:
        return held.replicated(out[0]), held.replicated(out[1])
    return held.replicated(out)


def getrs(a, b, *, group=None, tile=None, provider=None, timeout=None):
    """Solve A X = B for a general square A (LU with partial pivoting) held
    in column blocks.  Arguments and result as potrs.

    Raises:
      torch.linalg.LinAlgError: A is exactly singular (e.info = k, U(k,k)
        = 0, 1-based), or has NaN/Inf.  Others as potrs.
    """
    held = _Held("getrs", a, group, timeout)
    return held.replicated(getrs_op(held.shards, _local(b), held.group, held.rank,
                                    held.nranks, *_opts(tile, provider, timeout)))


def gels(a, b, *, group=None, tile=None, provider=None, timeout=None):
    """Least squares: X minimizing ||A X - B||_2 for a tall A (m x n, m >=
    n) of full column rank, held in column blocks: the n columns spread
    over the ranks by the block layout, each block holding all m rows.

    Args:
      a: as potrs's, each block m x k_r.  With group=, the ranks' widths are
        summed over the process group (one small all_reduce) to learn n.
      b: B, (m,) or (m, nrhs), every rank all of it.
      Others as potrs.

    Returns:
      X, (n,) or (n, nrhs), on b's device, every rank all of it.

    Raises:
      torch.linalg.LinAlgError: A is rank deficient (e.info = k: R(k,k) is
        zero or below m * eps * max|R(i,i)|), or has NaN/Inf.
      ValueError: m < n (a wide A), shapes.  Others as potrs.
    """
    held = _Held("gels", a, group, timeout)
    return held.replicated(gels_op(held.shards, _local(b), held.columns(timeout), held.group,
                                   held.rank, held.nranks, *_opts(tile, provider, timeout)))


lu_solve = getrs          # jaxmg's (and muster_jax's) name
least_squares = gels      # jaxmg's (and muster_jax's) name


def potri(a, *, group=None, tile=None, provider=None, timeout=None):
    """The inverse of a Hermitian positive definite A, held like A.

    Returns:
      The column blocks of A^-1 in the form `a` was given: a list of blocks
      (each on its block's device), this rank's block, or a DTensor.
    Arguments and errors as potrs.
    """
    held = _Held("potri", a, group, timeout)
    return held.blocks(potri_op(held.shards, held.group, held.rank, held.nranks,
                                *_opts(tile, provider, timeout)))


def syevd(a, *, return_eigenvectors=True, group=None, tile=None, provider=None, timeout=None):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian A.

    Returns:
      (w, v): w the n eigenvalues (real: float32 for float32/complex64,
      float64 otherwise), whole on every rank, on the first block's device;
      v the eigenvector columns (A v = v diag(w)) held like A.  Only w when
      return_eigenvectors=False (the eigenvectors are still computed when a
      requires grad: the derivative needs them).
    Arguments and errors as potrs.
    """
    held = _Held("syevd", a, group, timeout)
    vectors = return_eigenvectors or (torch.is_grad_enabled() and any(
        t.requires_grad for t in held.shards))
    w, v = syevd_op(held.shards, vectors, held.group, held.rank, held.nranks,
                    *_opts(tile, provider, timeout))
    w = held.replicated(w)
    return (w, held.blocks(v)) if return_eigenvectors else w


def block_columns(n: int, nranks: int, rank: int) -> tuple[int, int]:
    """(first column, count) of rank's block of n columns over nranks: the
    runtime's block layout (muster_layout_block_cols): blocks of ceil(n/nranks)
    columns, the last ones shorter or empty."""
    return _runtime.block_cols(_lib.runtime(), n, nranks, rank)


def split_columns(A: torch.Tensor, devices) -> list[torch.Tensor]:
    """A's column blocks in the runtime's block layout, block r on devices[r]
    (a list of devices, or a count of CPU ranks)."""
    if isinstance(devices, int):
        devices = ["cpu"] * devices
    n = A.shape[1]
    out = []
    for r, d in enumerate(devices):
        c0, k = block_columns(n, len(devices), r)
        out.append(A[:, c0:c0 + k].to(d))
    return out


def cat_columns(blocks, device=None) -> torch.Tensor:
    """The whole matrix from a list of column blocks, on `device` (default
    the first block's)."""
    device = device or blocks[0].device
    return torch.cat([b.to(device) for b in blocks], dim=1)
