"""muster_torch.linalg.qr / svd / svdvals / polar against torch.linalg
(lapack provider, 2 and 4 CPU ranks in this process): fresh random tall,
wide and square inputs in every dtype (backward errors and orthogonality
under 30 max(m, n) eps, as docs/factorizations.md's checks; singular values
and the unique factors against torch's, scaled by the condition number),
gradcheck of the backward rules, 3-D batches and torch.func.vmap against
torch.linalg per element, and the Python statement of
muster_routine_outputs against the C function.  group=:
test_torch_factor_dist.py."""
import os

import pytest
import torch

import factor_checks as fc
import muster_torch as mt
from factor_checks import mat, rel, tol
from muster_torch import _factor_run

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
SHAPES = [(6, 4), (4, 6), (5, 5)]  # tall, wide, square; over 4 ranks: short blocks


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
        a = mat(gen, m, n, dt)
        for mode in ("reduced", "complete"):
            out = mt.linalg.qr(a, mode, devices=ranks)
            assert isinstance(out, torch.return_types.linalg_qr)
            fc.check_qr(a, *out, mode)
        for full in (True, False):
            out = mt.linalg.svd(a, full, devices=ranks)
            assert isinstance(out, torch.return_types.linalg_svd)
            fc.check_svd(a, *out, full)
        fc.check_svdvals(a, mt.linalg.svdvals(a, devices=ranks))
        for side in ("right", "left"):
            fc.check_polar(a, *mt.linalg.polar(a, side, devices=ranks), side)


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


@pytest.mark.parametrize("dt", [torch.float64, torch.complex64], ids=["float64", "complex64"])
def test_vmap_and_batches(gen, dt):
    """torch.func.vmap and (2, 3, m, n) batches of each function, every
    element checked against torch.linalg (one muster call per element)."""
    for m, n in ((5, 3), (3, 5)):
        a = torch.stack([mat(gen, m, n, dt) for _ in range(6)]).reshape(2, 3, m, n)
        flat = a.reshape(6, m, n)
        q, r = torch.func.vmap(lambda x: tuple(mt.linalg.qr(x, devices=2)))(flat)
        qb, rb = mt.linalg.qr(a, "complete", devices=2)
        u, s, vh = torch.func.vmap(lambda x: tuple(mt.linalg.svd(x, full_matrices=False)))(flat)
        ub, sb, vhb = mt.linalg.svd(a, devices=2)
        sv = torch.func.vmap(lambda x: mt.linalg.svdvals(x, devices=2))(flat)
        up, p = torch.func.vmap(lambda x: mt.linalg.polar(x, devices=2))(flat)
        upb, pb = mt.linalg.polar(a, "left")
        assert qb.shape == (2, 3, m, m) and sb.shape == (2, 3, min(m, n)) and pb.shape == (2, 3, m, m)
        for i in range(6):
            j = (i // 3, i % 3)
            fc.check_qr(flat[i], q[i], r[i], "reduced")
            fc.check_qr(flat[i], qb[j], rb[j], "complete")
            fc.check_svd(flat[i], u[i], s[i], vh[i], False)
            fc.check_svd(flat[i], ub[j], sb[j], vhb[j], True)
            fc.check_svdvals(flat[i], sv[i])
            fc.check_polar(flat[i], up[i], p[i])
            fc.check_polar(flat[i], upb[j], pb[j], "left")


def test_grad_through_vmap(gen):
    """torch.autograd through vmap's results equals torch.linalg's gradient."""
    a = torch.stack([mat(gen, 5, 3, torch.float64) for _ in range(3)])
    for mine, theirs in ((lambda x: torch.func.vmap(lambda y: mt.linalg.svdvals(y))(x).pow(3).sum(),
                          lambda x: torch.linalg.svdvals(x).pow(3).sum()),
                         (lambda x: torch.func.vmap(lambda y: tuple(mt.linalg.qr(y)))(x)[0].abs().sum(),
                          lambda x: torch.linalg.qr(x).Q.abs().sum())):
        x1, x2 = a.clone().requires_grad_(), a.clone().requires_grad_()
        g1, = torch.autograd.grad(mine(x1), x1)
        g2, = torch.autograd.grad(theirs(x2), x2)
        assert rel(g1, g2) < tol(torch.float64, 5, 3, 64)
