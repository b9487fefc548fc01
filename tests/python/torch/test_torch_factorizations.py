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


def test_outputs_rule_matches_c():
    """_factor_run.outputs restates muster_routine_outputs: the same for
    every routine, flag and shape class (the C function through
    libmuster_jax.so's export, when the build has it)."""
    lib = pathlib.Path(os.environ["MUSTER_LIB_DIR"]) / "libmuster_jax.so"
    if not lib.exists():
        pytest.skip("no libmuster_jax.so in this build (jax not importable at build time)")
    fn = ctypes.CDLL(str(lib)).muster_jax_routine_outputs
    fn.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)]
    codes = {"geqrf": 6, "gesvd": 7, "polar": 8}
    flag_sets = {"geqrf": (0, 8), "gesvd": (0, 8, 1), "polar": (0,)}
    names = [None, "Q", "R", "U", "VH", "UP", "H"]
    for routine, code in codes.items():
        for flags in flag_sets[routine]:
            for m, n in ((7, 3), (3, 7), (4, 4)):
                out = (ctypes.c_int64 * 12)()
                assert fn(code, flags, m, n, out) == 0
                mine = _factor_run.outputs(routine, flags, m, n)
                parts = [(names[out[2 + 4 * i]],) + tuple(out[3 + 4 * i:6 + 4 * i]) for i in range(out[1])]
                assert (names[out[0]], parts, out[10], out[11]) == \
                    (mine["a"], mine["parts"], mine["b_cols"], mine["w_count"]), (routine, flags, m, n)
