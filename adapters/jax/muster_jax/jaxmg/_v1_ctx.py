"""jaxmg 1.4.1's *_shardmap_ctx forms: potrs_shardmap_ctx,
syevd_shardmap_ctx, lu_solve_shardmap_ctx, least_squares_shardmap_ctx.

In jaxmg 1.4.1 these take the global arrays, like potrs etc., and leave
the outer jax.jit to the caller: no jit of their own, and the work buffers
are returned first (a_work, then b_work for least_squares) so that an outer
jit can donate A into an A-sized output.  muster overwrites nothing of the
caller's, so a_work is A as given (b_work: x in its first N rows, zeros
below); what follows is what v1's potrs / syevd / lu_solve / least_squares
return, status always included.  gesvd_, polar_ and qr_shardmap_ctx
are with their functions in _v1_factors.
"""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from . import v1


def potrs_shardmap_ctx(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
                       matrix_specs=None, *, in_specs=None, return_logdet: bool = False, pad: bool = True):
    """potrs for a caller-owned jax.jit (jaxmg 1.4.1:
    potrs_shardmap_ctx(a, b, T_A, mesh=None, matrix_specs=None, *,
    in_specs=None, return_logdet=False, pad=True)).

    Returns:
      (a_work, x, status), or (a_work, x, logdet, status) with return_logdet.
    """
    out = v1.potrs(a, b, T_A, mesh, matrix_specs, in_specs=in_specs, return_status=True,
                   return_logdet=return_logdet)
    return (a, *out)


def syevd_shardmap_ctx(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
                       in_specs=None, return_eigenvectors: bool = True, pad: bool = True):
    """syevd for a caller-owned jax.jit (jaxmg 1.4.1:
    syevd_shardmap_ctx(a, T_A, mesh=None, matrix_specs=None, *,
    in_specs=None, return_eigenvectors=True, pad=True)).

    Returns:
      (a_work, w, V, status), or (a_work, w, status) without eigenvectors.
    """
    out = v1.syevd(a, T_A, mesh, matrix_specs, in_specs=in_specs, return_eigenvectors=return_eigenvectors,
                   return_status=True)
    return (a, *out)


def lu_solve_shardmap_ctx(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
                          matrix_specs=None, *, in_specs=None, pad: bool = True):
    """lu_solve for a caller-owned jax.jit (jaxmg 1.4.1:
    lu_solve_shardmap_ctx(a, b, T_A, mesh=None, matrix_specs=None, *,
    in_specs=None, pad=True)).

    Returns:
      (a_work, x, status).
    """
    x, status = v1.lu_solve(a, b, T_A, mesh, matrix_specs, in_specs=in_specs, return_status=True)
    return a, x, status


def least_squares_shardmap_ctx(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
                               matrix_specs=None, *, in_specs=None, pad: bool = True):
    """least_squares for a caller-owned jax.jit (jaxmg 1.4.1:
    least_squares_shardmap_ctx(a, b, T_A, mesh=None, matrix_specs=None, *,
    in_specs=None, pad=True)).

    Returns:
      (a_work, b_work, x, status): b_work is b's shape (M,) or (M, K), x in
      its first N rows and zeros below.
    """
    x, status = v1.least_squares(a, b, T_A, mesh, matrix_specs, in_specs=in_specs, return_status=True)
    rest = jnp.zeros((b.shape[0] - x.shape[0],) + tuple(x.shape[1:]), x.dtype)
    return a, jnp.concatenate([x, rest], axis=0), x, status
