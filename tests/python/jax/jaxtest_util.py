"""Random inputs, residual checks and device counts shared by the
muster_jax tests (a name of its own: pytest may collect other adapters'
tests in the same process)."""
import pathlib
import sys

import jax
import numpy as np
from jax.test_util import check_grads

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/python
import fdcheck  # noqa: E402
from fdcheck import eigen_conditioning, solve_conditioning  # noqa: E402,F401 (for the tests)


def ndevices():
    return len(jax.devices())


# The default backend's devices (GPUs on the GPU machine, 4 host devices in
# CI); tests that want "4" get min(4, what there is).
ND = min(4, ndevices())

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def eps(dt):
    return float(np.finfo(np.dtype(dt)).eps)


def hpd(rng, n, dt):
    """Hermitian positive definite, condition number below ~10."""
    m = rng.standard_normal((n, n))
    if np.iscomplexobj(np.zeros(1, dt)):
        m = m + 1j * rng.standard_normal((n, n))
    return (m @ m.conj().T / n + np.eye(n)).astype(dt)


def hermitian(rng, n, dt):
    m = rng.standard_normal((n, n))
    if np.iscomplexobj(np.zeros(1, dt)):
        m = m + 1j * rng.standard_normal((n, n))
    return ((m + m.conj().T) / 2).astype(dt)


def rhs(rng, n, nrhs, dt):
    b = rng.standard_normal((n, nrhs))
    if np.iscomplexobj(np.zeros(1, dt)):
        b = b + 1j * rng.standard_normal((n, nrhs))
    return b.astype(dt)


def check_potrs(a, b, x):
    """Scaled residual ||A x - b|| / ((||A|| ||x|| + ||b||) n eps): O(1) when right."""
    e = eps(np.asarray(x).dtype)
    a, b, x = (np.asarray(v, dtype=np.complex128) for v in (a, b, x))
    n = a.shape[0]
    r = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x) + np.linalg.norm(b))
    return r / (n * e)


def check_potri(a, inv):
    a64, inv64 = np.asarray(a, np.complex128), np.asarray(inv, np.complex128)
    n = a.shape[0]
    r = np.linalg.norm(a64 @ inv64 - np.eye(n)) / (np.linalg.norm(a64) * np.linalg.norm(inv64))
    return r / (n * eps(np.asarray(inv).dtype))


def check_syevd(a, w, v):
    a64 = np.asarray(a, np.complex128)
    w = np.asarray(w)
    v64 = np.asarray(v, np.complex128)
    n = a.shape[0]
    e = eps(np.asarray(v).dtype)
    res = np.linalg.norm(a64 @ v64 - v64 * w[None, :]) / (np.linalg.norm(a64) * n * e)
    orth = np.linalg.norm(v64.conj().T @ v64 - np.eye(n)) / (n * e)
    ref = np.linalg.eigvalsh(a64)
    werr = np.abs(np.sort(w) - ref).max() / (np.abs(ref).max() * n * e)
    return max(res, orth, werr), bool(np.all(np.diff(w) >= 0))


def check_grads_fd(f, args, order, dist, amp):
    """jax.test_util.check_grads(f, args, order), both modes, with the
    finite-difference step and tolerances derived from the problem
    (tests/python/fdcheck.py): dist and amp of the matrix args[0]
    (fdcheck.solve_conditioning, fdcheck.eigen_conditioning).  Each order
    is checked with its own tolerance (check_grads' order 2 repeats order
    1's checks, under order 2's looser one): first derivatives, the ones a
    wrong rule gets wrong first, under the tightest.  check_grads' tangents
    have N(0,1) entries (RandomState(0)); its check_close scales atol and
    rtol by each array's size, which only loosens them."""
    a = np.asarray(args[0])
    tangent = fdcheck.gaussian_norm(a.shape[0], a.shape[1], np.iscomplexobj(a))
    h, err = fdcheck.step_and_error(eps(a.dtype) / 2, tangent, dist, amp)
    out = [np.asarray(x) for x in jax.tree.leaves(f(*args))]
    out_norm = float(np.sqrt(sum(np.sum(np.abs(x) ** 2) for x in out)))
    args_norm = float(np.sqrt(sum(np.sum(np.abs(np.asarray(x)) ** 2) for x in args)))
    tol = fdcheck.SAFETY * err
    for k in range(1, order + 1):
        scale = fdcheck.derivative_scale(out_norm, sum(x.size for x in out), tangent, dist, k,
                                         args_norm)
        check_grads(f, args, order=k, modes=("fwd", "rev"), eps=h, atol=tol * scale, rtol=tol)
