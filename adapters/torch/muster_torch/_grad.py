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
  potrs_logdet  (X, l = log det A): as potrs for X, plus A_bar += l_bar A^-1
         (d l = tr(A^-1 dA)), A^-1's blocks by one potri.
  getrs  X = A^-1 B, A general:  B_bar = A^-H X_bar (one getrs with A^H,
         whose blocks each rank cuts from the gathered A), A_bar = -B_bar X^H.
  gels   X = (A^H A)^-1 A^H B, A m x n of full column rank:  Z = (A^H A)^-1
         X_bar (one potrs with the Gram matrix, from the gathered A),
         B_bar = A Z, A_bar = R Z^H - B_bar X^H with R = B - A X (the
         full-rank least-squares rule).  The Gram matrix squares A's
         condition number: the gradient of an ill-conditioned gels loses
         twice the digits its solution does.
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
from ._ops import gels_op, getrs_op, potri_op, potrs_logdet_op, potrs_op, syevd_op


def _col0s(a, group, rank, nranks, ncols=None):
    """First global column of each shard held here (as the forward placed
    them); ncols: A's columns (gels), default its rows."""
    if group:
        n = a[0].shape[0] if ncols is None else ncols
        return [_runtime.block_cols(_lib.runtime(), n, nranks, rank)[0]]
    out, c = [], 0
    for t in a:
        out.append(c)
        c += t.shape[1]
    return out


def _herm(m):
    return (m + m.mH) / 2


def _columns(x, c, device):
    """Rows c of X (n x nrhs, or a vector as one column) on `device`."""
    return (x[:, None] if x.dim() == 1 else x)[c].to(device)


def _mat(x):
    return x[:, None] if x.dim() == 1 else x


def _slices(a, group, rank, nranks, ncols=None):
    """The global columns of each shard held here."""
    return [slice(c0, c0 + t.shape[1])
            for t, c0 in zip(a, _col0s(a, group, rank, nranks, ncols))]


# ------------------------------------------------------------------- potrs
def _potrs_setup(ctx, inputs, output):
    a, b, *cfg = inputs
    ctx.cfg, ctx.na = cfg, len(a)
    x = output[0] if isinstance(output, tuple) else output
    ctx.save_for_backward(*a, x)


def _potrs_grads(ctx, a, x, gx):
    """(A_bar blocks or Nones, B_bar) of X = A^-1 B."""
    group, rank, nranks = ctx.cfg[:3]
    gb = potrs_op(a, gx, *ctx.cfg)
    ga = [None] * len(a)  # a list input wants a list back, also of Nones (torch.compile checks)
    if any(ctx.needs_input_grad[0]):
        x2, gb2 = _mat(x), _mat(gb)
        ga = []
        for t, c in zip(a, _slices(a, group, rank, nranks)):
            xd, gd = x2.to(t.device), gb2.to(t.device)
            ga.append(-(gd @ xd[c].mH + xd @ gd[c].mH) / 2)
    return ga, gb


def _potrs_backward(ctx, gx):
    *a, x = ctx.saved_tensors
    ga, gb = _potrs_grads(ctx, a, x, gx)
    return ga, (gb if ctx.needs_input_grad[1] else None), None, None, None, None, None, None


def _potrs_logdet_backward(ctx, gx, gl):
    """gx or gl is None when that output did not reach the loss (the same on
    every rank: the losses of replicated results are the same everywhere)."""
    *a, x = ctx.saved_tensors
    ga, gb = [None] * len(a), None
    if gx is not None:
        ga, gb = _potrs_grads(ctx, a, x, gx)
    if gl is not None and any(ctx.needs_input_grad[0]):
        inv = potri_op(a, *ctx.cfg)
        ga = [y * gl.to(y.device) + (g if g is not None else 0) for y, g in zip(inv, ga)]
    return ga, (gb if ctx.needs_input_grad[1] else None), None, None, None, None, None, None


# ------------------------------------------------------------------- getrs
def _getrs_backward(ctx, gx):
    *a, x = ctx.saved_tensors
    group, rank, nranks = ctx.cfg[:3]
    full = _dist.gather_columns(a, group, nranks)
    cols = _slices(a, group, rank, nranks)
    adjoint = [full[c].mH.contiguous().to(t.device) for t, c in zip(a, cols)]  # A^H's blocks
    gb = getrs_op(adjoint, gx, *ctx.cfg)
    ga = [None] * len(a)
    if any(ctx.needs_input_grad[0]):
        ga = [-(_mat(gb).to(t.device) @ _columns(x, c, t.device).mH) for t, c in zip(a, cols)]
    return ga, (gb if ctx.needs_input_grad[1] else None), None, None, None, None, None, None


# -------------------------------------------------------------------- gels
def _gels_setup(ctx, inputs, output):
    a, b, n, *cfg = inputs
    ctx.n, ctx.cfg = n, cfg
    ctx.save_for_backward(*a, b, output)


def _gels_backward(ctx, gx):
    *a, b, x = ctx.saved_tensors
    group, rank, nranks = ctx.cfg[:3]
    full = _dist.gather_columns(a, group, nranks, ncols=ctx.n)  # m x n
    cols = _slices(a, group, rank, nranks, ctx.n)
    gram = [(full.mH @ full[:, c]).to(t.device) for t, c in zip(a, cols)]
    z = _mat(potrs_op(gram, gx, *ctx.cfg)).to(full.device)
    gb = full @ z
    ga = [None] * len(a)
    if any(ctx.needs_input_grad[0]):
        x2 = _mat(x).to(full.device)
        r = _mat(b).to(full.device) - full @ x2
        ga = [(r @ z[c].mH - gb @ x2[c].mH).to(t.device) for t, c in zip(a, cols)]
    gb = (gb[:, 0] if b.dim() == 1 else gb).to(b.device)
    return (ga, (gb if ctx.needs_input_grad[1] else None), None, None, None, None, None, None,
            None)


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
torch.library.register_autograd("muster::potrs_logdet", _potrs_logdet_backward,
                                setup_context=_potrs_setup)
torch.library.register_autograd("muster::getrs", _getrs_backward, setup_context=_potrs_setup)
torch.library.register_autograd("muster::gels", _gels_backward, setup_context=_gels_setup)
torch.library.register_autograd("muster::potri", _potri_backward, setup_context=_potri_setup)
torch.library.register_autograd("muster::syevd", _syevd_backward, setup_context=_syevd_setup)
