"""Inputs and checks shared by the muster_torch tests."""
import torch

DTYPES = (torch.float32, torch.float64, torch.complex64, torch.complex128)


def eps(dtype):
    return torch.finfo(dtype if not dtype.is_complex else dtype.to_real()).eps


def hpd(n, dtype, gen, shift=1.0):
    """A Hermitian positive definite n x n matrix with condition number about
    (1 + shift) / shift: M M^H / n + shift I, M Gaussian."""
    real = torch.float64
    m = torch.randn((n, n), dtype=real, generator=gen)
    if dtype.is_complex:
        m = torch.complex(m, torch.randn((n, n), dtype=real, generator=gen))
    a = m @ m.mH / n + shift * torch.eye(n, dtype=m.dtype)
    return a.to(dtype)


def herm(n, dtype, gen):
    """A Hermitian n x n matrix (any signs)."""
    m = torch.randn((n, n), dtype=torch.float64, generator=gen)
    if dtype.is_complex:
        m = torch.complex(m, torch.randn((n, n), dtype=torch.float64, generator=gen))
    return ((m + m.mH) / 2).to(dtype)


def rhs(n, nrhs, dtype, gen):
    b = torch.randn((n, nrhs), dtype=torch.float64, generator=gen)
    if dtype.is_complex:
        b = torch.complex(b, torch.randn((n, nrhs), dtype=torch.float64, generator=gen))
    return b.to(dtype)


def tol(dtype, n, cond=10.0):
    """Relative residual bound: a small multiple of n * eps * condition."""
    return 30 * n * eps(dtype) * cond


def rel(resid, *scale):
    """|resid| / sum(|scale|), in double, as a Python float."""
    den = sum(float(torch.linalg.matrix_norm(s.to(torch.complex128)
                                            if s.is_complex() else s.double(), ord=1)
                    if s.dim() == 2 else s.abs().sum()) for s in scale)
    r = resid.to(torch.complex128) if resid.is_complex() else resid.double()
    num = float(torch.linalg.matrix_norm(r, ord=1) if r.dim() == 2 else r.abs().sum())
    return num / max(den, 1e-300)


def check_potrs(A, B, X):
    n = A.shape[0]
    assert X.shape == B.shape and X.dtype == B.dtype
    A64, B64, X64 = (t.to(torch.complex128 if t.is_complex() else torch.float64) for t in (A, B, X))
    r = rel(A64 @ X64 - B64, A64 @ X64, B64)
    assert r < tol(A.dtype, n), f"potrs residual {r:.3g} >= {tol(A.dtype, n):.3g}"


def check_potri(A, Ainv):
    n = A.shape[0]
    I = torch.eye(n, dtype=torch.complex128 if A.is_complex() else torch.float64)
    A64, Y = A.to(I.dtype), Ainv.to(I.dtype)
    r = rel(A64 @ Y - I, I)
    assert r < tol(A.dtype, n, cond=20), f"potri residual {r:.3g}"
    assert float((Y - Y.mH).abs().max()) < tol(A.dtype, n, cond=20) * float(Y.abs().max())


def check_syevd(A, w, V):
    n = A.shape[0]
    real = torch.float32 if A.dtype in (torch.float32, torch.complex64) else torch.float64
    assert w.dtype == real and w.shape == (n,)
    assert bool((w[1:] >= w[:-1]).all()), "eigenvalues not ascending"
    ct = torch.complex128 if A.is_complex() else torch.float64
    A64, w64 = A.to(ct), w.to(torch.float64)
    ref = torch.linalg.eigvalsh(A64)
    scale = float(A64.abs().sum(0).max())
    assert float((w64 - ref.double()).abs().max()) < tol(A.dtype, n) * scale
    if V is not None:
        V64 = V.to(ct)
        r = rel(A64 @ V64 - V64 * w64.to(ct)[None, :], A64)
        assert r < tol(A.dtype, n), f"syevd residual {r:.3g}"
        I = torch.eye(n, dtype=ct)
        assert float((V64.mH @ V64 - I).abs().max()) < tol(A.dtype, n)
