"""Inputs and checks of the factorization tests (qr, svd, svdvals, polar),
shared by test_torch_factorizations.py (one process) and factor_worker.py
(one rank per process): backward errors and orthogonality under
30 max(m, n) eps (docs/factorizations.md's checks), and the factors that
are unique up to signs or phases (|R|, S, U_p) against torch.linalg's."""
import torch

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


def check_qr(a, q, r, mode):
    """A = Q R, Q orthonormal, R upper trapezoidal, |R| = torch's |R|
    (R is unique up to the sign or phase of each row for a full-rank A)."""
    m, n = a.shape
    k = min(m, n)
    qs, rs = ((m, k), (k, n)) if mode == "reduced" else ((m, m), (m, n))
    assert q.shape == qs and r.shape == rs and q.dtype == r.dtype == a.dtype, (q.shape, r.shape)
    assert rel(q @ r, a) < tol(a.dtype, m, n), rel(q @ r, a)
    assert orth_err(q) < tol(a.dtype, m, n), orth_err(q)
    assert torch.all(torch.tril(r, -1) == 0)
    assert rel(r.abs(), torch.linalg.qr(a.to(C128), mode).R.abs()) < tol(a.dtype, m, n, 4)


def check_svd(a, u, s, vh, full):
    """A = U S V^H, U and V^H orthonormal, S torch's singular values."""
    m, n = a.shape
    k = min(m, n)
    us, vs = ((m, m), (n, n)) if full else ((m, k), (k, n))
    assert u.shape == us and vh.shape == vs and s.shape == (k,) and u.dtype == a.dtype
    assert s.dtype == a.real.dtype
    assert rel((u[:, :k] * s.to(a.dtype)) @ vh[:k], a) < tol(a.dtype, m, n)
    assert orth_err(u) < tol(a.dtype, m, n) and orth_err(vh) < tol(a.dtype, m, n)
    check_svdvals(a, s)


def check_svdvals(a, s):
    ref = torch.linalg.svdvals(a.to(C128)).to(torch.float64)
    assert float((s.to(torch.float64) - ref).abs().max()) < tol(a.dtype, *a.shape) * float(ref[0])


def check_polar(a, u, p, side="right"):
    """A = U_p H (or H U_p), U_p orthonormal, H Hermitian, and U_p equal to
    U V^H of torch's SVD (unique for a full-rank A)."""
    m, n = a.shape
    prod = u @ p if side == "right" else p @ u
    assert rel(prod, a) < tol(a.dtype, m, n) and orth_err(u) < tol(a.dtype, m, n)
    assert float((p - p.mH).abs().max()) < tol(a.dtype, m, n)
    x = a.to(C128) if side == "right" else a.to(C128).mH
    uu, _, vh = torch.linalg.svd(x, full_matrices=False)
    ref = uu @ vh if side == "right" else (uu @ vh).mH
    assert rel(u, ref) < tol(a.dtype, m, n, 4), rel(u, ref)
