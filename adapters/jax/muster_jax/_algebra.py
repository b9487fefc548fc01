"""The products of the derivative rules, on whole (sharded) arrays.

The rules work on the arrays the caller passed (N x N, sharded over the
mesh); every product names where its result goes, so XLA's partitioner
keeps it distributed, and Explicit mesh axes (jax.make_mesh's default),
which refuse e.g. A + A^H of a column-sharded A, get a placement they
accept.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from . import _factor, _sharding


def mm(x: jax.Array, y: jax.Array, mesh: Mesh, spec: P) -> jax.Array:
    """x @ y, placed as spec says: jax picks no placement for a product of
    arrays sharded over one axis in different dimensions under Explicit
    axes, so it is told (out_sharding); under Auto axes XLA's partitioner
    picks and the result is constrained."""
    if _sharding.explicit_axes(mesh):
        return jnp.matmul(x, y, out_sharding=NamedSharding(mesh, spec))
    return _sharding.constrain(x @ y, mesh, spec)


def adjoint(x: jax.Array) -> jax.Array:
    """x^H (x^T for real x)."""
    return jnp.conj(x).T if jnp.iscomplexobj(x) else x.T


def herm(x: jax.Array, mesh: Mesh, spec: P) -> jax.Array:
    """(X + X^H) / 2, placed as spec says: the part of a tangent the
    routines see (they read one triangle of a Hermitian A; JAX's cholesky
    and eigh do the same)."""
    return (_sharding.constrain(x, mesh, spec) + _sharding.constrain(adjoint(x), mesh, spec)) / 2


def status_tangent(status: jax.Array) -> np.ndarray:
    """The (empty) tangent of an integer status."""
    return np.zeros(np.shape(status), jax.dtypes.float0)


def cho_solve(a: jax.Array, l: jax.Array, r: jax.Array, *, mesh: Mesh, axis: str, n: int) -> jax.Array:
    """A^-1 r with the Cholesky factor l that potrs computed: differentiable
    in A and r to any order, forward and reverse, and never factors again.

    A lax.custom_linear_solve whose matvec is herm(A) (through it JAX finds
    the derivative in A: A^-1 (dr - herm(dA) A^-1 r)) and whose solves use
    l.  The transposed solve is A^-T r = conj(A^-1 conj(r)) for Hermitian A.

    Args:
      a: A, N x N (as the caller passed it).
      l: the padded factor, column blocks sharded P(None, axis).
      r: the right-hand sides, n x m.
      mesh, axis, n: where l is and A's order.

    Returns:
      A^-1 r, n x m.
    """
    l = jax.lax.stop_gradient(l)

    def solve(_, rhs):
        return _factor.solve(l, rhs, mesh=mesh, axis=axis, n=n)

    def solve_t(_, rhs):
        return jnp.conj(solve(None, jnp.conj(rhs))) if jnp.iscomplexobj(rhs) else solve(None, rhs)

    rep = P(None, None)

    def matvec(v):
        return (mm(a, v, mesh, rep) + mm(adjoint(a), v, mesh, rep)) / 2

    return jax.lax.custom_linear_solve(matvec, _sharding.constrain(r, mesh, rep), solve, solve_t)
