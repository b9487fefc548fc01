"""muster_torch.linalg.qr / svd / svdvals / polar against torch.linalg
(lapack provider, 2 and 4 CPU ranks in this process): fresh random tall,
wide and square inputs in every dtype (backward errors and orthogonality
under 30 max(m, n) eps, as docs/factorizations.md's checks; singular values
and the unique factors against torch's, scaled by the condition number),
gradcheck of the backward rules, a batch, and the Python statement of
muster_routine_outputs against the C function."""
import ctypes
import os
import pathlib

import pytest
import torch

import muster_torch as mt
from muster_torch import _factor_run

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
SHAPES = [(6, 4), (4, 6), (5, 5)]  # tall, wide, square; over 4 ranks: short blocks
C128 = torch.complex128


def eps(dt):
    return torch.finfo(dt).eps


def mat(gen, m, n, dt):
    """m x n with distinct singular values in [0.5, 2] (condition 4)."""
    def unitary(k):
        g = torch.randn(k, k, dtype=C128 if dt.is_complex else torch.float64, generator=gen)
        return torch.linalg.qr(g).Q
    k = min(m, n)
    s = torch.linspace(2.0, 0.5, k, dtype=torch.float64) * (1 + 0.05 * torch.rand(k, generator=gen, dtype=torch.float64))
    return ((unitary(m)[:, :k] * s.to(unitary(1).dtype)) @ unitary(n)[:k, :]).to(dt)


def tol(dt, m, n, cond=1.0):
    return 30 * max(m, n) * eps(dt) * cond


def rel(x, ref):
    x, ref = x.to(C128), ref.to(C128)
    return float(torch.linalg.norm(x - ref) / torch.linalg.norm(ref))


def orth_err(q):
    q = q.to(C128)
    g = q.mH @ q if q.shape[0] >= q.shape[1] else q @ q.mH
    return float((g - torch.eye(g.shape[0], dtype=C128)).abs().max())


@pytest.fixture
def gen():
    g = torch.Generator()
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    g.manual_seed(seed)
    return g


CASES = [(4, dt) for dt in DTYPES] + [(2, torch.float32), (2, torch.complex128)]


@pytest.mark.parametrize("ranks,dt", CASES, ids=[f"{r}ranks-{str(d)[6:]}" for r, d in CASES])
def test_factorizations(gen, ranks, dt):
    for m, n in SHAPES:
        a, k = mat(gen, m, n, dt), min(m, n)
        for mode, qs, rs in (("reduced", (m, k), (k, n)), ("complete", (m, m), (m, n))):
            out = mt.linalg.qr(a, mode, devices=ranks)
            assert isinstance(out, torch.return_types.linalg_qr)
            q, r = out
            assert q.shape == qs and r.shape == rs and q.dtype == r.dtype == dt
            assert rel(q @ r, a) < tol(dt, m, n) and orth_err(q) < tol(dt, m, n)
            assert torch.all(torch.tril(r, -1) == 0)
            assert rel(r.abs(), torch.linalg.qr(a.to(C128), mode).R.abs()) < tol(dt, m, n, 4)
        ref = torch.linalg.svdvals(a.to(C128))
        for full, us, vs in ((True, (m, m), (n, n)), (False, (m, k), (k, n))):
            out = mt.linalg.svd(a, full, devices=ranks)
            assert isinstance(out, torch.return_types.linalg_svd)
            u, s, vh = out
            assert u.shape == us and vh.shape == vs and s.shape == (k,) and u.dtype == dt
            assert s.dtype == (torch.float32 if dt in (torch.float32, torch.complex64) else torch.float64)
            assert rel((u[:, :k] * s.to(dt)) @ vh[:k], a) < tol(dt, m, n)
            assert orth_err(u) < tol(dt, m, n) and orth_err(vh) < tol(dt, m, n)
            assert float((s.to(torch.float64) - ref.to(torch.float64)).abs().max()) < tol(dt, m, n) * float(ref[0])
        assert rel(mt.linalg.svdvals(a, devices=ranks), ref) < tol(dt, m, n)
        for side in ("right", "left"):
            u, p = mt.linalg.polar(a, side, devices=ranks)
            prod = u @ p if side == "right" else p @ u
            assert rel(prod, a) < tol(dt, m, n) and orth_err(u) < tol(dt, m, n)
            assert float((p - p.mH).abs().max()) < tol(dt, m, n)


def _grad_fns():
    return [
        ("qr", lambda a: tuple(mt.linalg.qr(a, devices=2))),
        ("svdvals", lambda a: mt.linalg.svdvals(a, devices=2)),
        ("svd", lambda a: (lambda u, s, vh: (u * torch.tanh(s).to(u.dtype)) @ vh)(
            *mt.linalg.svd(a, full_matrices=False, devices=2))),
        ("polar", lambda a: mt.linalg.polar(a, devices=2)),
    ]


@pytest.mark.parametrize("dt", [torch.float64, torch.complex128], ids=["float64", "complex128"])
@pytest.mark.parametrize("name", [f[0] for f in _grad_fns()])
def test_gradcheck(gen, name, dt):
    f = dict(_grad_fns())[name]
    for m, n in ((6, 4), (4, 6)):
        a = mat(gen, m, n, dt).requires_grad_()
        assert torch.autograd.gradcheck(f, (a,), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_grads_match_torch(gen):
    """Gradients of real losses against torch.linalg's."""
    a = mat(gen, 6, 4, torch.complex128)
    w = torch.randn(6, 4, dtype=torch.float64, generator=gen)
    pairs = [(lambda x: (mt.linalg.qr(x).Q.abs() * w).square().sum(), lambda x: (torch.linalg.qr(x).Q.abs() * w).square().sum()),
             (lambda x: mt.linalg.svdvals(x).pow(3).sum(), lambda x: torch.linalg.svdvals(x).pow(3).sum())]
    for mine, theirs in pairs:
        x1, x2 = a.clone().requires_grad_(), a.clone().requires_grad_()
        g1, = torch.autograd.grad(mine(x1), x1)
        g2, = torch.autograd.grad(theirs(x2), x2)
        assert rel(g1, g2) < tol(torch.float64, 6, 4, 64)


def test_batch_and_refusals(gen):
    a = torch.stack([mat(gen, 5, 3, torch.float64) for _ in range(2)])
    q, r = mt.linalg.qr(a, devices=2)
    assert q.shape == (2, 5, 3) and r.shape == (2, 3, 3) and rel(q @ r, a) < tol(torch.float64, 5, 3)
    assert mt.linalg.svdvals(a).shape == (2, 3)
    assert mt.linalg.qr(a[0], "r").Q.numel() == 0
    with pytest.raises(ValueError, match="mode"):
        mt.linalg.qr(a[0], "economic")
    with pytest.raises(ValueError, match="driver"):
        mt.linalg.svd(a[0], driver="gesdd")
    x = a[0].clone().requires_grad_()
    with pytest.raises(NotImplementedError, match="full_matrices"):
        mt.linalg.svd(x)[0].sum().backward()


def test_outputs_rule_is_the_runtimes():
    """_factor_run.outputs is libmuster's muster_routine_outputs_flat (the
    one rule; every case in C: layout_factor_outputs): a few cases as
    docs/factorizations.md states them, and a refusal."""
    assert _factor_run.outputs("geqrf", 0, 7, 3) == {
        "a_holds": "Q", "parts": [("R", 3, 3, 0)], "b_cols": 2, "w_count": 0}
    assert _factor_run.outputs("gesvd", _factor_run.FULL_MATRICES, 3, 7) == {
        "a_holds": None, "parts": [("U", 3, 3, 0), ("VH", 7, 7, 9)], "b_cols": 20, "w_count": 3}
    assert _factor_run.outputs("polar", 0, 4, 4) == {
        "a_holds": "UP", "parts": [("H", 4, 4, 0)], "b_cols": 4, "w_count": 0}
    with pytest.raises(ValueError, match="muster_routine_outputs"):
        _factor_run.outputs("polar", _factor_run.FULL_MATRICES, 4, 4)
