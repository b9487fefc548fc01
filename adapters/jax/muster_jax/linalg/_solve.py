"""solve and inv: jax.scipy.linalg.solve / jnp.linalg.solve and
jnp.linalg.inv on muster's potrs, potri and getrs."""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

from .. import _args, _cholesky, _general, _mesh_types, _program
from . import _batch, _place


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen", *,
          mesh: Mesh | None = None, T_A: int | None = None, provider: str | None = None) -> jax.Array:
    """Solve A x = b: jax.scipy.linalg.solve's signature (jnp.linalg.solve(a, b) too).

    assume_a="pos" (A Hermitian positive definite): muster's potrs, on the
    Hermitian matrix of A's lower (lower=True) or upper (lower=False, the
    default, as scipy) triangle; the other triangle is not read.  "gen",
    "sym", "her": getrs, LU with partial pivoting on all of A (muster has
    no symmetric-indefinite solver; jax.scipy uses LU for these too).

    Args:
      a: A, N x N (a jax or numpy array, or an array-like), sharded over
        one dimension of a mesh or not at all.
      b: (N,) or (N, K).
      lower, assume_a: as jax.scipy.linalg.solve.
      overwrite_a, overwrite_b, debug, check_finite: accepted and ignored,
        as jax.scipy ignores them (muster never overwrites an input).
      mesh: where to solve (None: a's mesh, else the `jax.set_mesh`
        context's, else every device of the default backend).
      T_A, provider: as muster_jax.potrs.

    Returns:
      x, b's shape, replicated.

    Batches: a (..., N, N) with b (..., N) or (..., N, K) of the same
    leading dimensions (not broadcast), solved one matrix after another.

    Differences from jax.scipy: a failure raises (JaxRuntimeError
    INVALID_ARGUMENT: "not positive definite", "singular") where
    jax.scipy returns NaN or inf; b's batch dimensions are not broadcast.  Derivatives: assume_a="pos" follows potrs's rule along the
    Hermitian matrix of the triangle read (jax.scipy differentiates all of
    a: the two agree for every Hermitian direction); the others, lu_solve's.
    """
    what = "muster_jax.linalg.solve"
    assume = _place.assume(assume_a, what)
    a = _args.array(a, "a", what)
    if a.ndim > 2:
        b = _args.array(b, "b", what)
        _batch.lead(a, b, what)
        m = _place.where(a, mesh, what)[0]
        return _batch.run(solve, (a, b), m, lower=bool(lower), assume_a=assume, mesh=m, T_A=T_A,
                          provider=provider)
    a = _place.matrix(a, what)
    b = _place.rhs(b, a.shape[0], what)
    dtype = _place.inexact(what, a, b)
    mesh, spec = _place.where(a, mesh, what)
    T_A, provider = _args.tile(T_A, what), _args.provider(provider, what)
    return _program.run(_solve, (a, b), mesh, mesh=mesh, spec=spec, dtype=dtype, pos=assume == "pos",
                        lower=bool(lower), T_A=T_A, provider=provider)


def _solve(a, b, *, mesh, spec, dtype, pos, lower, T_A, provider):
    a, b = a.astype(dtype), b.astype(dtype)
    if pos:
        h = _place.from_triangle(a, mesh, spec, lower)
        return _cholesky.potrs(h, b, T_A, mesh, (spec, P(None, None)), provider=provider)
    return _general.lu_solve(a, b, T_A, mesh, spec, provider=provider)


def inv(a, *, assume_a: str = "gen", mesh: Mesh | None = None, T_A: int | None = None,
        provider: str | None = None) -> jax.Array:
    """The inverse of A: jnp.linalg.inv(a), plus assume_a.

    assume_a="pos" (A Hermitian positive definite): muster's potri on the
    Hermitian matrix of A's lower triangle; the result sharded like a
    (replicated when N does not divide evenly over the devices).  "gen"
    (the default, as jnp), "sym", "her": getrs of the identity, A X = I,
    LU on all of A; the result replicated.

    Args:
      a: A, N x N.
      assume_a: "gen", "sym", "her" or "pos".
      mesh, T_A, provider: as solve.

    Returns:
      A^-1, N x N.

    Differences from jnp.linalg.inv: a singular or (with "pos") indefinite
    A raises (JaxRuntimeError INVALID_ARGUMENT) where jnp returns inf/NaN.
    A batch (..., N, N) is inverted one matrix after another.  Derivatives: potri's rule (along Hermitian
    directions of the lower triangle) or lu_solve's.
    """
    what = "muster_jax.linalg.inv"
    assume = _place.assume(assume_a, what)
    a = _args.array(a, "a", what)
    if a.ndim > 2:
        m = _place.where(a, mesh, what)[0]
        return _batch.run(inv, (a,), m, assume_a=assume, mesh=m, T_A=T_A, provider=provider)
    a = _place.matrix(a, what)
    dtype = _place.inexact(what, a)
    mesh, spec = _place.where(a, mesh, what)
    T_A, provider = _args.tile(T_A, what), _args.provider(provider, what)
    return _program.run(_inv, (a,), mesh, mesh=mesh, spec=spec, dtype=dtype, pos=assume == "pos", T_A=T_A,
                        provider=provider)


def _inv(a, *, mesh, spec, dtype, pos, T_A, provider):
    a = a.astype(dtype)
    if pos:
        inv = _cholesky.potri(_place.from_triangle(a, mesh, spec, True), T_A, mesh, spec, provider=provider)
        return _mesh_types.follow(inv, a, mesh)
    return _general.lu_solve(a, jnp.eye(a.shape[0], dtype=dtype), T_A, mesh, spec, provider=provider)
