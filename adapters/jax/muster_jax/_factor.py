"""Solves with a Cholesky factor that potrs already computed: what the
derivative rules use so that no derivative factors A again.

The factor L (lower) stays where potrs left it, in column blocks over the
devices (device r holds columns [r*w, (r+1)*w) of the padded Np x Np
factor); the right-hand sides are replicated.  Block forward and back
substitution move one w x m block per step: nothing gathers L.

These functions are never differentiated or transposed by JAX: they are
the `solve` of a lax.custom_linear_solve (_algebra.cho_solve), whose rules
call them again on tangents and cotangents.
"""
from functools import partial

import jax
import jax.numpy as jnp
from jax.lax import linalg as lax_linalg
from jax.sharding import Mesh, PartitionSpec as P

from . import _sharding


def _adjoint(x: jax.Array) -> jax.Array:
    return jnp.conj(x).T if jnp.iscomplexobj(x) else x.T


def _lower(l_loc: jax.Array, me: jax.Array, n: int) -> jax.Array:
    """This device's block of L as the substitutions read it: the lower
    triangle (potrs leaves A's upper triangle above it), with ones on the
    padding diagonal so the padded system stays solvable."""
    w = l_loc.shape[1]
    rows = jnp.arange(l_loc.shape[0])[:, None]
    cols = me * w + jnp.arange(w)[None, :]
    keep = (rows >= cols) & (rows < n) & (cols < n)
    return jnp.where(keep, l_loc, (rows == cols).astype(l_loc.dtype))


def _from(x: jax.Array, src: int, me: jax.Array, axis: str) -> jax.Array:
    """Device src's x on every device."""
    return jax.lax.psum(jnp.where(me == src, x, jnp.zeros_like(x)), axis)


def _diag_block(lm: jax.Array, j: int, me: jax.Array) -> jax.Array:
    """Diagonal block j of L on device j, the identity elsewhere (every
    device runs the same triangular solve; only device j's result is kept,
    the identity keeps the others finite)."""
    w = lm.shape[1]
    return jnp.where(me == j, lm[j * w:(j + 1) * w], jnp.eye(w, dtype=lm.dtype))


def _forward(lm: jax.Array, r: jax.Array, me: jax.Array, R: int, axis: str) -> jax.Array:
    """Y with L Y = r: device j solves with its diagonal block once the
    updates of blocks < j have arrived, hands Y_j to everyone and keeps
    L[:, cols_j] Y_j as its own update."""
    w = lm.shape[1]
    y = jnp.zeros_like(r)
    mine = jnp.zeros_like(r)
    for j in range(R):
        rows = slice(j * w, (j + 1) * w)
        # nothing to add before block 0 (and XLA's CPU compiler fails on an
        # all-reduce of a complex zero constant)
        s = jax.lax.psum(mine[rows], axis) if j else 0
        yj = _from(lax_linalg.triangular_solve(_diag_block(lm, j, me), r[rows] - s, left_side=True,
                                               lower=True), j, me, axis)
        y = y.at[rows].set(yj)
        mine = jnp.where(me == j, lm @ yj, mine)
    return y


def _backward(lm: jax.Array, y: jax.Array, me: jax.Array, R: int, axis: str) -> jax.Array:
    """Z with L^H Z = y: device j holds L[:, cols_j], so it forms
    L[rows_>j, cols_j]^H Z_>j itself."""
    w = lm.shape[1]
    z = jnp.zeros_like(y)
    for j in reversed(range(R)):
        rows = slice(j * w, (j + 1) * w)
        t = _adjoint(lm) @ z  # the rows of blocks <= j of z are still zero
        zj = lax_linalg.triangular_solve(_diag_block(lm, j, me), y[rows] - t, left_side=True, lower=True,
                                         transpose_a=True, conjugate_a=True)
        z = z.at[rows].set(_from(zj, j, me, axis))
    return z


@partial(jax.jit, static_argnames=("mesh", "axis", "n"))  # eagerly: one compile, not one per op
def solve(l: jax.Array, r: jax.Array, *, mesh: Mesh, axis: str, n: int) -> jax.Array:
    """A^-1 r = L^-H L^-1 r with the factor potrs left.

    Args:
      l: the padded factor, Np x Np, column blocks sharded P(None, axis)
        (its lower triangle is L; the rest is ignored).
      r: the right-hand sides, n x m (any sharding).
      mesh: the mesh.
      axis: the mesh axis l's columns are spread over.
      n: order of A.

    Returns:
      A^-1 r, n x m, replicated.
    """
    Np, R = l.shape[0], _sharding.axis_size(mesh, axis)
    r = jnp.pad(r, ((0, Np - n), (0, 0))) if Np != n else r

    def body(l_loc, r):
        me = jax.lax.axis_index(axis)
        lm = _lower(l_loc, me, n)
        return _backward(lm, _forward(lm, r, me, R, axis), me, R, axis)

    x = jax.shard_map(body, mesh=mesh, in_specs=(P(None, axis), P(None, None)), out_specs=P(None, None),
                      check_vma=False)(l, r)
    return x[:n]
