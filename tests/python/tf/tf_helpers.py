"""Random inputs and residual checks for the muster_tf tests.

Correctness is judged by residuals on fresh random inputs, with tolerances
scaled by the dtype's epsilon and n (normwise backward errors).
"""
import os

import numpy as np
import tensorflow as tf

NP = {tf.float32: np.float32, tf.float64: np.float64,
      tf.complex64: np.complex64, tf.complex128: np.complex128}
C = 30.0  # allowed multiple of n * eps


def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)  # shown by pytest on failure
    return np.random.default_rng(seed)


def random(r, shape, dtype):
    x = r.standard_normal(shape)
    if np.issubdtype(NP[dtype], np.complexfloating):
        x = x + 1j * r.standard_normal(shape)
    return x.astype(NP[dtype])


def cast(x, dtype):
    if not np.issubdtype(NP[dtype], np.complexfloating):
        x = x.real
    return x.astype(NP[dtype])


def spd(r, n, dtype):
    """Hermitian positive definite, well conditioned."""
    m = random(r, (n, n), dtype).astype(np.complex128)
    return cast(m @ m.conj().T / n + np.eye(n), dtype)


def hermitian(r, n, dtype):
    m = random(r, (n, n), dtype).astype(np.complex128)
    return cast((m + m.conj().T) / 2, dtype)


def eps(dtype):
    return float(np.finfo(NP[dtype]).eps)


def nrm(x):
    return float(np.linalg.norm(np.asarray(x, dtype=np.complex128)))


def check_potrs(a, b, x, dtype):
    n = a.shape[0]
    a64, b64, x64 = (np.asarray(v, np.complex128) for v in (a, b, x))
    err = nrm(a64 @ x64 - b64) / (nrm(a64) * nrm(x64) + nrm(b64))
    assert err < C * n * eps(dtype), "potrs backward error %.3g (n=%d)" % (err, n)


def check_potri(a, inv, dtype):
    n = a.shape[0]
    a64, i64 = np.asarray(a, np.complex128), np.asarray(inv, np.complex128)
    err = nrm(a64 @ i64 - np.eye(n)) / (nrm(a64) * nrm(i64))
    assert err < C * n * eps(dtype), "potri residual %.3g (n=%d)" % (err, n)
    herm = nrm(i64 - i64.conj().T) / nrm(i64)
    assert herm < C * n * eps(dtype), "potri result not Hermitian: %.3g" % herm


def check_syevd(a, w, v, dtype):
    n = a.shape[0]
    a64, v64 = np.asarray(a, np.complex128), np.asarray(v, np.complex128)
    w = np.asarray(w, np.float64)
    assert w.shape == (n,)
    assert np.all(np.diff(w) >= -C * n * eps(dtype) * nrm(a64)), "eigenvalues not ascending"
    err = nrm(a64 @ v64 - v64 * w[None, :]) / (nrm(a64) * n)
    assert err < C * n * eps(dtype), "syevd residual %.3g (n=%d)" % (err, n)
    orth = nrm(v64.conj().T @ v64 - np.eye(n)) / n
    assert orth < C * n * eps(dtype), "eigenvectors not orthonormal: %.3g" % orth
    ref = np.linalg.eigvalsh(a64)
    assert np.max(np.abs(w - ref)) < C * n * eps(dtype) * nrm(a64), "eigenvalues differ from numpy"


def general(r, n, dtype):
    """A general square matrix, well conditioned: 2 I + G / (2 sqrt(n))."""
    return cast(2 * np.eye(n) + random(r, (n, n), dtype).astype(np.complex128) / (2 * n ** 0.5),
                dtype)


def tall(r, m, n, dtype):
    """m x n (m >= 2n) of full column rank, singular values near 1."""
    return cast(np.eye(m, n) + random(r, (m, n), dtype).astype(np.complex128) / (4 * m ** 0.5),
                dtype)


def check_getrs(a, b, x, dtype):
    """The normwise backward error of A X = B, as potrs's."""
    check_potrs(a, b, x, dtype)


def check_gels(a, b, x, dtype):
    """The normal equations' residual ||A^H (A X - B)|| over ||A|| (||A||
    ||X|| + ||B||): zero exactly for the least-squares solution."""
    m, n = a.shape
    a64, b64, x64 = (np.asarray(v, np.complex128) for v in (a, b, x))
    assert x64.shape == (n,) + b64.shape[1:]
    err = nrm(a64.conj().T @ (a64 @ x64 - b64)) / (nrm(a64) * (nrm(a64) * nrm(x64) + nrm(b64)))
    assert err < C * m * eps(dtype), "gels normal-equations residual %.3g (m=%d)" % (err, m)


def check_logdet(a, ld, dtype):
    """log det A (real, of A's real dtype) against numpy's, in double."""
    assert ld.dtype == np.dtype(NP[dtype](0).real.dtype) and np.shape(ld) == ()
    sign, ref = np.linalg.slogdet(np.asarray(a, np.complex128))
    assert abs(sign - 1) < 1e-9
    n = a.shape[0]
    assert abs(float(ld) - ref) <= C * n * eps(dtype) * max(1.0, abs(ref)), (float(ld), ref)
