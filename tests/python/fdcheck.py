"""Step and tolerances of a finite-difference derivative check, derived from
the problem instead of constants: one rule for jax.test_util.check_grads
(tests/python/jax/jaxtest_util.py) and torch.autograd.gradcheck
(tests/python/torch/torch_util.py).

Both compare a derivative with a central difference along a tangent v:

    (f(x + h v) - f(x - h v)) / 2h  =  f'(x) v  +  truncation  +  rounding

Truncation: f is analytic within a distance `dist` of x, in the 2-norm of
the matrix argument (sigma_min(A) for a solve, inverse, least squares or log
det: A + E stays invertible, of full rank, while |E| < sigma_min; half the
smallest eigenvalue gap for eigenvalues and eigenvectors).  By Cauchy's
estimate its k-th derivative along v is at most about k! |f| L^k, with
L = |v| / dist, so the difference is off by about (h L)^2 relative to the
derivative's own size.
Rounding: a backward-stable f is computed to a relative error of about
amp * u (u the unit roundoff; amp = cond(A), cond(A) + cond(A)^2 for
least squares with a residual, |A| / gap for eigenvectors); the quotient
divides it by 2h: about amp u / (h L) relative.
Their sum is smallest at h L = (amp u / 2)^(1/3), where it is
3 (amp u / 2)^(2/3): 3e-10 for least squares in float64 with cond(A) = 4
(check_grads' and gradcheck's `eps` is that h).
(jax's fixed h = 1e-4 made h L about 1e-3 there, a truncation of 1e-6
relative, against a fixed tolerance of 1e-5: 5 seeds in 200 failed.)

The numbers compared are derivatives up to `order` along random tangents,
and (check_grads' reverse mode) their inner products with a random
cotangent, which can cancel to near zero: so the tolerance is absolute, the
relative error times a bound on their size (`derivative_scale`), times
SAFETY for the constants the estimates leave out.
"""
import math

import numpy as np

SAFETY = 10.0


def step_and_error(unit_roundoff, tangent_norm, dist, amp):
    """(h, relative error) of a central difference at the best step h along
    a tangent of 2-norm `tangent_norm` (module docstring)."""
    lip = tangent_norm / dist
    c = max(amp, 1.0) * unit_roundoff / 2
    return c ** (1 / 3) / lip, 3 * c ** (2 / 3)


def derivative_scale(out_norm, out_size, tangent_norm, dist, order, args_norm):
    """A bound on the size of what a check of derivatives up to `order`
    compares: |f|, times L = |v| / dist per derivative along a tangent,
    times |args| / dist for the second order's derivative along the
    arguments themselves (check_grads passes them as the tangents of its
    first-order function), times the cotangent's norm (about
    sqrt(out_size)) for the inner products."""
    lip = tangent_norm / dist
    return (math.sqrt(out_size) * (1 + out_norm) * (1 + lip) ** order
            * (1 + args_norm / dist) ** (order - 1))


def gaussian_norm(rows, cols, is_complex):
    """About the largest 2-norm of a rows x cols matrix of N(0,1) entries
    (real and imaginary parts each N(0,1) when complex): sqrt(rows) +
    sqrt(cols), Gordon's bound on the mean, plus 2 for its tail."""
    return (math.sqrt(rows) + math.sqrt(cols) + 2) * (math.sqrt(2) if is_complex else 1)


# ---- dist and amp of the problems the tests differentiate ----------------------

def solve_conditioning(a, least_squares=False):
    """(dist, amp) of a solve, inverse or log det on A, or least squares
    with a residual: sigma_min(A), and cond(A) (least squares: cond +
    cond^2, Wedin's bound on its forward error)."""
    s = np.linalg.svd(np.asarray(a, np.complex128), compute_uv=False)
    cond = s[0] / s[-1]
    return s[-1], cond + cond ** 2 if least_squares else cond


def eigen_conditioning(a):
    """(dist, amp) of eigenvalues and eigenvectors of the Hermitian part
    of A: half the smallest gap between its eigenvalues, and |A| / gap."""
    a = np.asarray(a, np.complex128)
    w = np.linalg.eigvalsh((a + a.conj().T) / 2)
    gap = float(np.min(np.diff(w)))
    return gap / 2, float(np.abs(w).max()) / gap
