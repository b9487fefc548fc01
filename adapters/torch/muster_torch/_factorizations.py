"""qr, svd, svdvals and polar: torch.linalg's names, signatures and result
types on muster's geqrf, gesvd and polar (docs/factorizations.md), with
autograd.

Backward: each rule's JVP (the formulas of JAX's qr and svd rules, which
torch's linalg_qr_backward / svd_backward are the adjoints of) is linear in
dA for fixed factors, so its adjoint applied to the output gradients is
torch.autograd.grad of that linear map: torch's own adjoint of the same
formulas, with no second factorization.  polar's goes through the SVD's.
Like torch, the full (complete) forms of a non-square A and mode="r" have
no backward.  With group= the same rules run on the whole matrices, each
rank keeping its columns of A_bar (_factor_grad.py: the block factor and
its gradient gathered; the recomputed thin SVD is a collective call too).

group= (a process group): A is this rank's column block (the runtime's
block layout) and the call is collective; the factor the runtime leaves in
A's place (muster_routine_outputs' a_holds: Q or U of a tall A, R or V^H of
a wide one, U_p) comes back as this rank's column block of it, the others
whole on every rank (_factor_run.factor).  Batches and torch.func.vmap:
one muster call per matrix (_each, _loop_rule).
"""
import torch

from ._factor_grad import Whole
from ._factor_run import FULL_MATRICES, NO_VECTORS, factor


def _h(x):
    return x.mH


def _qr_jvp(q, r, a, da):
    """dQ, dR of A = Q R for A's tangent da (JAX's rule; m < n: the square
    rule on the first m columns)."""
    m, n = a.shape
    k = min(m, n)
    da1 = da[:, :k]
    da_rinv = torch.linalg.solve_triangular(r[:, :k], da1, upper=True, left=False)
    c = _h(q) @ da_rinv
    low = torch.tril(c, -1)
    do = low - _h(low)
    if c.is_complex():
        do = do + torch.diag_embed(1j * c.diagonal().imag).to(c.dtype)
    dq = q @ (do - c) + da_rinv
    dr = (c - do) @ r[:, :k]
    if n > m:
        dr = torch.cat([dr, _h(dq) @ a[:, m:] + _h(q) @ da[:, m:]], dim=1)
    return dq, dr


def _svd_jvp(u, s, vh, da):
    """dU, dS, dVh of the thin SVD (JAX's rule)."""
    m, n = u.shape[0], vh.shape[1]
    dt = u.dtype
    v = _h(vh)
    dS = _h(u) @ da @ v
    ds = dS.diagonal().real
    srow = s[None, :]
    eye = torch.eye(s.shape[0], dtype=s.dtype, device=s.device)
    f = (1 / ((srow + srow.mT) * (srow - srow.mT) + eye) - eye).to(dt)
    dss, sds = srow.to(dt) * dS, srow.mT.to(dt) * dS
    s_inv = torch.where(s == 0, torch.zeros_like(s), 1 / torch.where(s == 0, torch.ones_like(s), s))
    du = u @ (f * (dss + _h(dss)) + 0.5 * (dS - _h(dS)) * torch.diag(s_inv).to(dt))
    dv = v @ (f * (sds + _h(sds)))
    if m > n:
        dav = da @ v
        du = du + (dav - u @ (_h(u) @ dav)) / srow.to(dt)
    if n > m:
        dahu = _h(da) @ u
        dv = dv + (dahu - v @ (vh @ dahu)) / srow.to(dt)
    return du, ds, _h(dv)


def _adjoint(jvp, a, grads):
    """The adjoint of the linear map da -> jvp(da) applied to grads."""
    with torch.enable_grad():
        da = torch.zeros_like(a, requires_grad=True)
        outs = jvp(da)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
        if not pairs:
            return torch.zeros_like(a)
        return torch.autograd.grad([o for o, _ in pairs], da, [g for _, g in pairs], allow_unused=True)[0]


def _loop_rule(apply):
    """A Function's torch.func.vmap rule: one muster call per batch element
    (under group= each is a collective: every rank must vmap over the same
    batch size, as for the ops' rules in _vmap.py), stacked on dimension 0."""
    def rule(info, in_dims, a, *rest):
        d = in_dims[0]
        outs = [apply(a if d is None else a.select(d, i), *rest) for i in range(info.batch_size)]
        return tuple(torch.stack(o) for o in zip(*outs)), (0,) * len(outs[0])
    return staticmethod(rule)


def _whole_view(ctx, a, routine, flags):
    """(A, view): A whole and the group's view (_factor_grad.Whole) under
    group=, else (a, None)."""
    if ctx.opts.get("group") is None:
        return a, None
    view = Whole(ctx.opts, a, routine, flags)
    return view.gather(a), view


def _thin_svd(ctx, a, view):
    """The thin SVD of A (whole: the block factor of a group= call gathered)."""
    u, s, vh = _SVD.apply(a.detach(), 0, ctx.opts)
    if view is not None:
        u, vh = view.whole("U", u, view.thin_holds), view.whole("VH", vh, view.thin_holds)
    return u, s, vh


def _ours(view, ga):
    return ga if view is None else view.mine(ga)


class _QR(torch.autograd.Function):
    @staticmethod
    def forward(a, full, opts):
        got = factor("geqrf", FULL_MATRICES if full else 0, a, **opts)
        return got["Q"], got["R"]

    @staticmethod
    def setup_context(ctx, inputs, output):
        a, ctx.full, ctx.opts = inputs
        ctx.save_for_backward(a, *output)

    @staticmethod
    def backward(ctx, gq, gr):
        a, q, r = ctx.saved_tensors
        a, view = _whole_view(ctx, a, "geqrf", FULL_MATRICES if ctx.full else 0)
        if view is not None:
            q, gq, r, gr = view.whole("Q", q), view.whole("Q", gq), view.whole("R", r), view.whole("R", gr)
        m, n = a.shape
        if ctx.full and m > n:
            raise NotImplementedError("muster_torch.linalg.qr: no backward for mode='complete' of a tall A "
                                      "(torch has none either); use mode='reduced'")
        return _ours(view, _adjoint(lambda da: _qr_jvp(q, r, a, da), a, (gq, gr))), None, None

    vmap = _loop_rule(lambda a, full, opts: _QR.apply(a, full, opts))


class _SVD(torch.autograd.Function):
    @staticmethod
    def forward(a, flags, opts):
        got = factor("gesvd", flags, a, **opts)
        if flags & NO_VECTORS:
            return (got["S"],)
        return got["U"], got["S"], got["VH"]

    @staticmethod
    def setup_context(ctx, inputs, output):
        a, ctx.flags, ctx.opts = inputs
        ctx.save_for_backward(a)

    @staticmethod
    def backward(ctx, *grads):
        a, = ctx.saved_tensors
        block = a
        a, view = _whole_view(ctx, a, "gesvd", ctx.flags)
        m, n = a.shape
        if ctx.flags & FULL_MATRICES and m != n:
            raise NotImplementedError("muster_torch.linalg.svd: no backward for full_matrices=True of a "
                                      "non-square A (as torch); pass full_matrices=False")
        u, s, vh = _thin_svd(ctx, block, view)
        if ctx.flags & NO_VECTORS:
            return _ours(view, _adjoint(lambda da: (_svd_jvp(u, s, vh, da)[1],), a, grads)), None, None
        if view is not None:
            grads = (view.whole("U", grads[0]), grads[1], view.whole("VH", grads[2]))
        return _ours(view, _adjoint(lambda da: _svd_jvp(u, s, vh, da), a, grads)), None, None

    vmap = _loop_rule(lambda a, flags, opts: _SVD.apply(a, flags, opts))


def _polar_jvp(u, s, vh, da):
    """dU_p, dH of A = U_p H from the thin SVD's rule: U_p = U V^H and
    H = (V S V^H + (V S V^H)^H) / 2, as polar() differentiates them."""
    du, ds, dvh = _svd_jvp(u, s, vh, da)
    sv, dsv = s[:, None].to(vh.dtype) * vh, ds[:, None].to(vh.dtype) * vh
    dh = _h(dvh) @ sv + _h(vh) @ (dsv + s[:, None].to(vh.dtype) * dvh)
    return du @ vh + u @ dvh, (dh + _h(dh)) / 2


class _Polar(torch.autograd.Function):
    """polar's own call: without group= only where no derivative is wanted
    (polar() goes through _SVD when A requires grad) and for its vmap rule;
    with group= always, its backward the SVD's rule on the whole matrices
    (_polar_jvp)."""
    @staticmethod
    def forward(a, opts):
        got = factor("polar", 0, a, **opts)
        return got["UP"], got["H"]

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.opts = inputs[1]
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, gu, gh):
        a, = ctx.saved_tensors
        if ctx.opts.get("group") is None:  # polar() differentiates through _SVD instead
            raise NotImplementedError("muster_torch.linalg.polar: no backward of this path")
        block = a
        a, view = _whole_view(ctx, a, "polar", 0)
        u, s, vh = _thin_svd(ctx, block, view)
        ga = _adjoint(lambda da: _polar_jvp(u, s, vh, da), a, (view.whole("UP", gu), gh))
        return view.mine(ga), None

    vmap = _loop_rule(lambda a, opts: _Polar.apply(a, opts))


def _opts(what, devices, group, tile, provider, timeout):
    if devices is not None and group is not None:
        raise ValueError(f"muster_torch.linalg.{what}: devices= splits a whole A in this process, group= "
                         "takes this rank's block of A: pass one of them")
    return {"devices": devices, "group": group, "tile": tile, "provider": provider, "timeout": timeout}


def _each(fn, A):
    """fn over A's leading batch dimensions (one muster call per matrix)."""
    if A.dim() == 2:
        return fn(A)
    outs = [fn(x) for x in A.reshape((-1,) + A.shape[-2:])]
    return tuple(torch.stack(o).reshape(A.shape[:-2] + o[0].shape) for o in zip(*outs))


def _check(what, A, group=None):
    if not isinstance(A, torch.Tensor) or A.dim() < 2:
        raise ValueError(f"muster_torch.linalg.{what}: A must be a tensor of shape (*, m, n), got "
                         f"{getattr(A, 'shape', type(A).__name__)}")
    if A.dtype not in (torch.float32, torch.float64, torch.complex64, torch.complex128):
        raise TypeError(f"muster_torch.linalg.{what}: dtype {A.dtype} not supported (float32, float64, "
                        "complex64, complex128)")
    if A.numel() == 0 and (group is None or A.shape[-2] == 0):  # a rank's block may have no column
        raise ValueError(f"muster_torch.linalg.{what}: A is empty, shape {tuple(A.shape)}")


def qr(A, mode="reduced", *, devices=None, group=None, tile=None, provider=None, timeout=None):
    """torch.linalg.qr (geqrf): (Q, R) as torch.return_types.linalg_qr.
    mode "reduced" (Q m x k, R k x n), "complete" (Q m x m, R m x n) or
    "r" (Q empty, as torch).  group=: A is this rank's column block, and
    so is the result the runtime leaves in A's place (module docstring)."""
    _check("qr", A, group)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"muster_torch.linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    opts = _opts("qr", devices, group, tile, provider, timeout)
    q, r = _each(lambda a: _QR.apply(a, mode == "complete", opts), A)
    if mode == "r":
        q = torch.empty(0, dtype=A.dtype, device=A.device)
    return torch.return_types.linalg_qr((q, r))


def svd(A, full_matrices=True, *, driver=None, devices=None, group=None, tile=None, provider=None, timeout=None):
    """torch.linalg.svd (gesvd): (U, S, Vh) as torch.return_types.linalg_svd;
    driver must be None or "gesvd" (muster's is gesvd's QR iteration).
    group=: as qr's (U of a tall A, Vh of a wide one come back as this
    rank's column block; full_matrices=True: all whole)."""
    _check("svd", A, group)
    _driver("svd", driver)
    flags = FULL_MATRICES if full_matrices else 0
    opts = _opts("svd", devices, group, tile, provider, timeout)
    return torch.return_types.linalg_svd(_each(lambda a: _SVD.apply(a, flags, opts), A))


def svdvals(A, *, driver=None, devices=None, group=None, tile=None, provider=None, timeout=None):
    """torch.linalg.svdvals (gesvd without vectors): S, descending."""
    _check("svdvals", A, group)
    _driver("svdvals", driver)
    opts = _opts("svdvals", devices, group, tile, provider, timeout)
    return _each(lambda a: _SVD.apply(a, NO_VECTORS, opts), A)[0]


def polar(A, side="right", *, devices=None, group=None, tile=None, provider=None, timeout=None):
    """The polar decomposition (torch has none; scipy.linalg.polar's
    signature and (u, p) result): side "right", A = u p (p n x n), or
    "left", A = p u (p m x m); u has orthonormal columns (rows when m < n),
    p is Hermitian positive semidefinite.  From muster's polar; backward
    through the thin SVD's rule (distinct singular values).  group=: u
    comes back as this rank's column block, p whole; side="right" only."""
    _check("polar", A, group)
    if side not in ("right", "left"):
        raise ValueError(f"muster_torch.linalg.polar: side must be 'right' or 'left', got {side!r}")
    if side == "left" and group is not None:
        raise ValueError("muster_torch.linalg.polar: side='left' factors A^H, whose column blocks are "
                         "not the ranks' blocks of A: no group= form; use side='right'")
    opts = _opts("polar", devices, group, tile, provider, timeout)

    def one(a):
        if side == "left":
            u, p = one_right(a.mH)
            return u.mH, p
        return one_right(a)

    def one_right(a):
        if group is not None or not torch.is_grad_enabled() or not a.requires_grad:
            return _Polar.apply(a if group is not None else a.detach(), opts)
        u, s, vh = _SVD.apply(a, 0, opts)  # differentiable: through the SVD
        h = vh.mH @ (s[:, None].to(vh.dtype) * vh)
        return u @ vh, (h + h.mH) / 2

    return _each(one, A)


def _driver(what, driver):
    if driver not in (None, "gesvd"):
        raise ValueError(f"muster_torch.linalg.{what}: driver={driver!r}: muster's SVD is gesvd; pass None")

