"""gradcheck of qr, svd, svdvals and polar with group= (factor_worker.py's
case "grads"): torch.autograd.gradcheck on every rank of the process group
at once, of one function of the WHOLE A (the same on every rank):

    A -> this rank's column block (_Scatter) -> muster_torch.linalg.X(block,
    group=pg) -> the factor held in blocks made whole again (_Gather)

so every rank perturbs the same entry of the same A in the same order
(gradcheck's random directions seeded alike), every forward and backward
is the same collective call on every rank, and each rank's Jacobian is the
whole function's.  _Scatter's backward gathers the ranks' block gradients
(A_bar whole on every rank); _Gather's hands each rank its columns of the
gradient of the whole factor, which is the same on every rank (the
contract of the factors' backward, muster_torch/_factor_grad.py).  The
losses are those of test_torch_factorizations.py's gradcheck: qr's (Q, R),
svdvals, svd's gauge-invariant (U tanh(S)) V^H, polar's (U_p, H)."""
import torch

import muster_torch as mt
from muster_torch import _dist, _factor_run


class _Scatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, c0, k, name, nranks):
        ctx.cfg = (name, nranks, a.shape[1])
        return a[:, c0:c0 + k].clone()

    @staticmethod
    def backward(ctx, g):
        name, nranks, n = ctx.cfg
        return _dist.gather_columns([g], name, nranks, ncols=n), None, None, None, None


class _Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, block, c0, n, name, nranks):
        ctx.cols = (c0, block.shape[1])
        return _dist.gather_columns([block], name, nranks, ncols=n)

    @staticmethod
    def backward(ctx, g):
        c0, k = ctx.cols
        return g[:, c0:c0 + k].contiguous(), None, None, None, None


def _fns(pg, rank, nranks, m, n):
    """name -> the whole-A function of each factorization (module docstring)."""
    name = mt.group_name(pg)
    c0, k = mt.block_columns(n, nranks, rank)

    def block(a):
        return _Scatter.apply(a, c0, k, name, nranks)

    def whole(routine, flags, what, x):
        held = _factor_run.outputs(routine, flags, m, n)["a_holds"]
        return _Gather.apply(x, c0, n, name, nranks) if what == held else x

    def qr(a):
        q, r = mt.linalg.qr(block(a), group=pg)
        return whole("geqrf", 0, "Q", q), whole("geqrf", 0, "R", r)

    def svd(a):
        u, s, vh = mt.linalg.svd(block(a), full_matrices=False, group=pg)
        u, vh = whole("gesvd", 0, "U", u), whole("gesvd", 0, "VH", vh)
        return (u * torch.tanh(s).to(u.dtype)) @ vh

    def polar(a):
        u, p = mt.linalg.polar(block(a), group=pg)
        return whole("polar", 0, "UP", u), p

    return {"qr": qr, "svdvals": lambda a: mt.linalg.svdvals(block(a), group=pg), "svd": svd, "polar": polar}


def gradchecks(pg, rank, nranks, gen, fc):
    """gradcheck (fast mode) of every function, f64 and c128, on a tall and
    a wide A; AssertionError naming the one that fails."""
    for dt in (torch.float64, torch.complex128):
        for m, n in ((6, 4), (4, 6)):
            a = fc.mat(gen, m, n, dt).requires_grad_()
            for what, f in _fns(pg, rank, nranks, m, n).items():
                torch.manual_seed(m * 100 + n)  # gradcheck's random directions: the same on every rank
                ok = torch.autograd.gradcheck(f, (a,), eps=1e-6, atol=1e-5, rtol=1e-4, fast_mode=True)
                assert ok, f"gradcheck of {what} {m}x{n} {dt} with group= over {nranks} ranks"
