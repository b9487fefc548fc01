"""syevd on one device inside shard_map, with its derivative (a JVP rule;
JAX transposes it for reverse mode).

With A = V diag(w) V^H and C = V^H dA_h V (dA_h the Hermitian part of the
tangent):

  dw = diag(C)                 (real)
  dV = V (F o C),  F_ij = 1 / (w_j - w_i) for i != j, F_ii = 0

the rule jnp.linalg.eigh uses.  As there, the eigenvector derivative
assumes distinct eigenvalues: with a repeated eigenvalue F is infinite and
dV is not finite (the eigenvectors of a repeated eigenvalue are not unique,
so they have no derivative); the eigenvalues' derivative is always defined.
The eigenvectors' phases are fixed so that V^H dV has a zero diagonal, so
only functions that do not depend on each vector's phase (or sign) have
meaningful derivatives through V.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from . import _dist
from ._call import NO_VECTORS, SYEVD, Solve


@partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def syevd(cfg: Solve, vectors: bool, a: jax.Array) -> tuple:
    """Eigenvalues (and eigenvectors) of A on this device.

    Args:
      cfg: the call's configuration.
      vectors: compute the eigenvectors too.
      a: this device's column block of A.

    Returns:
      (w, V's column block, status), or (w, status) without vectors; w has
      a's row count (the entries past n are padding).
    """
    v, w, status = cfg.call(SYEVD, a, flags=0 if vectors else NO_VECTORS)
    return (w, v, status) if vectors else (w, status)


@syevd.defjvp
def _syevd_jvp(cfg, vectors, primals, tangents):
    if cfg.cyclic_1d:
        raise NotImplementedError("muster_jax: derivatives need A in the block layout (cyclic_1d=False)")
    (a,), (da,) = primals, tangents
    w, v, status = syevd(cfg, True, a)  # the eigenvalues' derivative needs V too
    ax = cfg.dist_axis()
    valid_w = jnp.arange(w.shape[0]) < ax.n
    v = jnp.where(_dist.valid_mask(v, ax), v, 0)  # the padding holds no eigenvector
    w = jnp.where(valid_w, w, 0)
    c = _dist.hmatmul(v, _dist.matmul(_dist.herm(da, ax), v, ax), ax)
    dw = jnp.where(valid_w, jnp.real(_dist.diagonal(c, ax)), 0)
    cols = _dist.global_cols(ax, v.shape[1])
    gap = w[cols][None, :] - w[:, None]  # w_j - w_i for this device's columns j
    off = (jnp.arange(w.shape[0])[:, None] != cols[None, :]) & _dist.valid_mask(v, ax)
    f = jnp.where(off, 1 / jnp.where(off, gap, 1), 0).astype(v.dtype)
    st = np.zeros(status.shape, jax.dtypes.float0)
    if not vectors:
        return (w, status), (dw, st)
    return (w, v, status), (dw, _dist.matmul(v, f * c, ax), st)
