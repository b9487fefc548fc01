"""potrs, potri and the log-determinant on one device inside shard_map,
with their derivatives (JVP rules; JAX transposes them for reverse mode).

A is Hermitian: the routines read its lower triangle, and a tangent dA
enters through its Hermitian part dA_h = (dA + dA^H) / 2 (as JAX's cholesky
does), so the rules give the derivative along Hermitian directions.

  potrs   X = A^-1 B        dX = A^-1 (dB - dA_h X), solved with the
                            Cholesky factor the forward call left in A;
                            reverse mode: B_bar = A^-1 X_bar (the same
                            factor again), A_bar = -(B_bar X^H)_h
  potri   Y = A^-1          dY = -Y dA_h Y
  logdet  2 sum log L_ii    d = Re tr(A^-1 dA), with A^-1 from potri

Each rule calls the routine itself for its primal values, so rules nest:
derivatives of any order, forward or reverse.  The matrices stay in column
blocks throughout (_dist); nothing is gathered on one device.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from . import _dist
from ._call import NO_FACTOR, POTRI, POTRS, Solve


def _no_cyclic(cfg: Solve) -> None:
    if cfg.cyclic_1d:
        raise NotImplementedError("muster_jax: derivatives need A in the block layout "
                                  "(cyclic_1d=False); solve the cyclic form without differentiating it")


def _status_tangent(status: jax.Array) -> np.ndarray:
    return np.zeros(status.shape, jax.dtypes.float0)


def logdet_of_factor(l_loc: jax.Array, ax: _dist.Axis) -> jax.Array:
    """log det A = 2 sum log L_ii, from this device's block of the factor
    (the diagonal entries it holds), summed over the devices."""
    d = jnp.diagonal(jax.lax.dynamic_slice_in_dim(l_loc, _dist.rank(ax) * l_loc.shape[1], l_loc.shape[1]))
    valid = _dist.global_cols(ax, l_loc.shape[1]) < ax.n
    logs = jnp.where(valid, jnp.log(jnp.where(valid, jnp.real(d), 1)), 0)
    return 2 * jax.lax.psum(jnp.sum(logs), ax.name)


# ---- potrs ---------------------------------------------------------------------------------


@partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def potrs(cfg: Solve, logdet: bool, a: jax.Array, b: jax.Array) -> tuple:
    """X = A^-1 B on this device.

    Args:
      cfg: the call's configuration.
      logdet: also return log det A (from the factor; no extra pass).
      a: this device's column block of A (ld x w).
      b: B, ld x nrhs, on every device.

    Returns:
      (X, status), or (X, log det A, status) with logdet.
    """
    if logdet:
        l_loc, x, status = cfg.call(POTRS, a, b)
        return x, logdet_of_factor(l_loc, cfg.dist_axis()), status
    _, x, status = cfg.call(POTRS, a, b, flags=NO_FACTOR)
    return x, status


@potrs.defjvp
def _potrs_jvp(cfg, logdet, primals, tangents):
    _no_cyclic(cfg)
    a, b = primals
    da, db = tangents
    # one call, the factor kept: it serves X, log det A and every solve below
    l_loc, x0, status = cfg.call(POTRS, jax.lax.stop_gradient(a), jax.lax.stop_gradient(b))
    x, dx = jax.jvp(lambda a, b: _solution(cfg, a, b, l_loc, x0), (a, b), (da, db))
    if not logdet:
        return (x, status), (dx, _status_tangent(status))
    ld0 = logdet_of_factor(l_loc, cfg.dist_axis())
    ld, dld = jax.jvp(lambda a: _logdet(cfg, a, ld0), (a,), (da,))
    return (x, ld, status), (dx, dld, _status_tangent(status))


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def _solution(cfg: Solve, a: jax.Array, b: jax.Array, l_loc: jax.Array, x: jax.Array) -> jax.Array:
    """X as a function of A and B (its value x computed already, with the
    factor l_loc): what makes the rule differentiable again."""
    return x


@_solution.defjvp
def _solution_jvp(cfg, primals, tangents):
    a, b, l_loc, x = primals
    da, db, _, _ = tangents
    x = _solution(cfg, a, b, l_loc, x)
    ax = cfg.dist_axis()
    return x, _dist.cho_solve(a, l_loc, db - _dist.herm_matvec(da, x, ax), ax)


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def _logdet(cfg: Solve, a: jax.Array, ld: jax.Array) -> jax.Array:
    """log det A as a function of A (its value ld computed already)."""
    return ld


@_logdet.defjvp
def _logdet_jvp(cfg, primals, tangents):
    a, ld = primals
    da, _ = tangents
    inv, _ = potri(cfg, a)
    # tr(A^-1 dA) = sum conj(A^-1) * dA over every entry (A^-1 is Hermitian)
    return _logdet(cfg, a, ld), jnp.real(_dist.trace_product(inv, da, cfg.dist_axis()))


# ---- potri ---------------------------------------------------------------------------------


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def potri(cfg: Solve, a: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A^-1 on this device.

    Args:
      cfg: the call's configuration.
      a: this device's column block of A.

    Returns:
      (this device's column block of A^-1, status).
    """
    inv, _, status = cfg.call(POTRI, a)
    return inv, status


@potri.defjvp
def _potri_jvp(cfg, primals, tangents):
    _no_cyclic(cfg)
    (a,), (da,) = primals, tangents
    inv, status = potri(cfg, a)
    ax = cfg.dist_axis()
    dinv = -_dist.matmul(inv, _dist.matmul(_dist.herm(da, ax), inv, ax), ax)
    return (inv, status), (dinv, _status_tangent(status))
