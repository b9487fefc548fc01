"""Derivatives of the ops (torch.library.register_autograd), written with
muster's own solves: the same group, the same shards, so a backward pass
runs where the forward did (one process, or every rank of the process group).

A is Hermitian, so each gradient returned for A is Hermitian too (the
gradient with respect to a Hermitian A, torch's conjugate-Wirtinger
convention, as torch.linalg.eigh): check it with gradcheck through a
function that symmetrizes its input, (M + M^H)/2.

  potrs  X = A^-1 B:  B_bar = A^-1 X_bar (one more potrs: muster keeps no
         factor between calls), A_bar = -(B_bar X^H + X B_bar^H)/2, each
         rank computing its own columns.
  potri  Y = A^-1:    A_bar = -Y S Y with S = (Y_bar + Y_bar^H)/2: gather S,
         Z = A^-1 S by one potrs (n right-hand sides), each rank's columns
         A_bar[:, c] = -Z Y[:, c].
  syevd  A = V diag(w) V^H:  A_bar = V (diag(w_bar) + F o skew(V^H V_bar)) V^H
         with F_ij = 1/(w_j - w_i) (0 on the diagonal), skew(M) = (M - M^H)/2
         (torch.linalg.eigh's rule); V and V_bar gathered, each rank keeps
         its columns.  Degenerate eigenvalues give infinite gradients there,
         as in torch.

Replicated results (X, w, and the gradients flowing into them) must be the
same on every rank, the contract of a DTensor Replicate placement: the
backward solve takes rank 0's X_bar.  Every rank must run the backward
pass (it is collective, like the forward).
"""
import torch

from . import _dist, _lib, _runtime
from ._ops import potri_op, potrs_op, syevd_op


def _col0s(a, group, rank, nranks):
    """First global column of each shard held here (as the forward placed them)."""
    if group:
        n = a[0].shape[0]
        return [_runtime.block_cols(_lib.runtime(), n, nranks, rank)[0]]
    out, c = [], 0
    for t in a:
        out.append(c)
        c += t.shape[1]
    return out


def _herm(m):
    return (m + m.mH) / 2


# ------------------------------------------------------------------- potrs
def _potrs_setup(ctx, inputs, output):
    a, b, *cfg = inputs
    ctx.cfg, ctx.na, ctx.vec = cfg, len(a), b.dim() == 1
    ctx.save_for_backward(*a, output)


def _potrs_backward(ctx, gx):
    *a, x = ctx.saved_tensors
    group, rank, nranks = ctx.cfg[:3]
    gb = potrs_op(a, gx, *ctx.cfg)
    ga = [None] * len(a)  # a list input wants a list back, also of Nones (torch.compile checks)
    if any(ctx.needs_input_grad[0]):
        x2, gb2 = (x[:, None], gb[:, None]) if ctx.vec else (x, gb)
        ga = []
        for t, c0 in zip(a, _col0s(a, group, rank, nranks)):
            xd, gd = x2.to(t.device), gb2.to(t.device)
            c = slice(c0, c0 + t.shape[1])
            ga.append(-(gd @ xd[c].mH + xd @ gd[c].mH) / 2)
    return ga, (gb if ctx.needs_input_grad[1] else None), None, None, None, None, None, None


# ------------------------------------------------------------------- potri
def _potri_setup(ctx, inputs, output):
    a, *cfg = inputs
    ctx.cfg = cfg
    ctx.save_for_backward(*a, *output)


def _potri_backward(ctx, gy):
    saved = ctx.saved_tensors
    a, y = list(saved[:len(saved) // 2]), list(saved[len(saved) // 2:])
    group, rank, nranks = ctx.cfg[:3]
    gy = [g if g is not None else torch.zeros_like(t) for g, t in zip(gy, y)]
    s = _herm(_dist.gather_columns(gy, group, nranks))
    z = potrs_op(a, s, *ctx.cfg)
    ga = [-(z.to(t.device) @ t) for t in y]
    return ga, None, None, None, None, None, None


# ------------------------------------------------------------------- syevd
def _syevd_setup(ctx, inputs, output):
    a, vectors, *cfg = inputs
    w, v = output
    if not vectors:
        raise RuntimeError("muster_torch.syevd: no derivative without eigenvectors "
                           "(muster_torch.syevd computes them when a requires grad)")
    ctx.cfg = cfg
    ctx.save_for_backward(w, *v)


def _syevd_backward(ctx, gw, gv):
    w, *v = ctx.saved_tensors
    group, rank, nranks = ctx.cfg[:3]
    vf = _dist.gather_columns(v, group, nranks)
    gw = torch.zeros_like(w) if gw is None else gw
    if gv is None or all(g is None for g in gv):
        m = torch.diag(gw.to(vf.dtype).to(vf.device))
    else:
        gv = [g if g is not None else torch.zeros_like(t) for g, t in zip(gv, v)]
        m = vf.mH @ _dist.gather_columns(gv, group, nranks)
        m = (m - m.mH) / 2
        wd = w.to(vf.device)
        e = wd[None, :] - wd[:, None]
        e.fill_diagonal_(1)
        m = m / e
        m.diagonal().copy_(gw.to(vf.device))
    left = vf @ m
    ga = []
    for t, c0 in zip(v, _col0s(v, group, rank, nranks)):
        rows = vf[c0:c0 + t.shape[1]]
        ga.append((left @ rows.mH).to(t.device))
    return ga, None, None, None, None, None, None, None


torch.library.register_autograd("muster::potrs", _potrs_backward, setup_context=_potrs_setup)
torch.library.register_autograd("muster::potri", _potri_backward, setup_context=_potri_setup)
torch.library.register_autograd("muster::syevd", _syevd_backward, setup_context=_syevd_setup)
