"""Inputs and checks shared by the muster_torch tests."""
import math
import pathlib
import sys

import torch
from torch.autograd import gradcheck

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/python
import fdcheck  # noqa: E402
from fdcheck import eigen_conditioning, solve_conditioning  # noqa: E402,F401 (for the tests)

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


def general(n, dtype, gen):
    """A general (non-Hermitian) n x n matrix with condition number of a few
    units: 2 I + M / sqrt(n) / 2, M Gaussian (its spectrum lies in a disc
    of radius about 1/2 around 2)."""
    m = rhs(n, n, torch.float64, gen)
    if dtype.is_complex:
        m = torch.complex(m, rhs(n, n, torch.float64, gen))
    return (2 * torch.eye(n, dtype=m.dtype) + m / (2 * n ** 0.5)).to(dtype)


def tall(m, n, dtype, gen):
    """An m x n matrix (m >= 2n) of full column rank, singular values within
    about [0.5, 1.5]: [I; 0] + G / sqrt(m) / 4, G Gaussian."""
    g = rhs(m, n, torch.float64, gen)
    if dtype.is_complex:
        g = torch.complex(g, rhs(m, n, torch.float64, gen))
    return (torch.eye(m, n, dtype=g.dtype) + g / (4 * m ** 0.5)).to(dtype)


def _wide(*ts):
    return [t.to(torch.complex128 if t.is_complex() else torch.float64) for t in ts]


def check_getrs(A, B, X, cond=10.0):
    """||A X - B|| / (||A|| ||X|| + ||B||) below the dtype's bound."""
    n = A.shape[0]
    assert X.shape == B.shape and X.dtype == B.dtype
    A64, B64, X64 = _wide(A, B, X)
    X2 = X64[:, None] if X64.dim() == 1 else X64
    r = rel(A64 @ X64 - B64, A64 @ X2, B64 if B64.dim() == 2 else B64[:, None])
    assert r < tol(A.dtype, n, cond), f"getrs residual {r:.3g} >= {tol(A.dtype, n, cond):.3g}"


def check_gels(A, B, X, cond=10.0):
    """The normal equations' residual ||A^H (A X - B)|| over ||A|| (||A||
    ||X|| + ||B||) below the dtype's bound (X is the least-squares solution
    exactly when A^H (A X - B) = 0)."""
    m, n = A.shape
    assert X.dtype == B.dtype and X.shape == (n,) + tuple(B.shape[1:])
    A64, B64, X64 = _wide(A, B, X)
    if B64.dim() == 1:
        B64, X64 = B64[:, None], X64[:, None]
    num = A64.mH @ (A64 @ X64 - B64)
    norm = lambda t: float(torch.linalg.matrix_norm(t, ord=1))  # noqa: E731
    r = norm(num) / (norm(A64) * (norm(A64) * norm(X64) + norm(B64)))
    assert r < tol(A.dtype, m, cond), f"gels residual {r:.3g} >= {tol(A.dtype, m, cond):.3g}"


def check_logdet(A, ld):
    """log det A against torch's, in double: |error| <= tol * max(1, |log det|)."""
    real = torch.float32 if A.dtype in (torch.float32, torch.complex64) else torch.float64
    assert ld.dtype == real and ld.shape == (), (ld.dtype, ld.shape)
    sign, ref = torch.linalg.slogdet(_wide(A)[0])
    assert abs(float(sign.real) - 1) < 1e-9
    err = abs(float(ld) - float(ref))
    assert err <= tol(A.dtype, A.shape[0]) * max(1.0, abs(float(ref))), (float(ld), float(ref))


def gradcheck_fd(f, inputs, dist, amp):
    """torch.autograd.gradcheck(f, inputs) with the finite-difference step
    and tolerances derived from the problem (tests/python/fdcheck.py): dist
    and amp of the matrix inputs[0] (fdcheck.solve_conditioning,
    fdcheck.eigen_conditioning).  gradcheck moves one real or imaginary
    part at a time (tangents of norm 1) and compares every entry of the
    Jacobians: |numerical - analytical| <= atol + rtol |numerical|."""
    dtype = inputs[0].dtype
    h, err = fdcheck.step_and_error(eps(dtype) / 2, 1.0, dist, amp)
    with torch.no_grad():
        out = f(*inputs)
    out = [out] if isinstance(out, torch.Tensor) else list(out)
    norm = lambda ts: math.sqrt(sum(float(t.detach().abs().pow(2).sum()) for t in ts))  # noqa: E731
    scale = fdcheck.derivative_scale(norm(out), sum(t.numel() for t in out), 1.0, dist, 1,
                                     norm(inputs))
    tol = fdcheck.SAFETY * err
    return gradcheck(f, inputs, eps=h, atol=tol * scale, rtol=tol)
