"""cho_factor and cho_solve (jax.scipy.linalg's names): potrs's Cholesky
factor, kept distributed, and solves with it that never factor again."""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

from .. import _algebra, _args, _call, _cholesky_rules, _program, _sharding
from . import _place


@jax.tree_util.register_pytree_node_class
class CholeskyFactor:
    """What cho_factor returns in place of jax.scipy's factor matrix c: the
    Hermitian matrix A that was factored (the triangle read, completed)
    and its Cholesky factor L, padded and left in column blocks over the
    mesh as potrs computed it (L never moves).  Pass it to cho_solve; it
    is a pytree (it crosses jax.jit), not a matrix: it has no L as an
    array of A's shape (jax.scipy's c would)."""

    def __init__(self, a, factor, mesh: Mesh, axis, n: int, lower: bool):
        self.a, self.factor = a, factor
        self.mesh, self.axis, self.n, self.lower = mesh, axis, n, lower

    def tree_flatten(self):
        return (self.a, self.factor), (self.mesh, self.axis, self.n, self.lower)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.n)

    @property
    def dtype(self):
        return self.a.dtype

    def __repr__(self) -> str:
        return f"CholeskyFactor(n={self.n}, dtype={self.a.dtype}, axis={self.axis!r}, lower={self.lower})"


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True, *,
               mesh: Mesh | None = None, T_A: int | None = None,
               provider: str | None = None) -> tuple[CholeskyFactor, bool]:
    """The Cholesky factorization of a Hermitian positive definite A, for
    cho_solve: jax.scipy.linalg.cho_factor's signature and (c, lower)
    result, but c is a CholeskyFactor: muster's potrs factors the
    Hermitian matrix of A's lower (lower=True) or upper triangle once and
    keeps L where it was computed, in column blocks over the devices; no
    factor matrix comes back.  cho_solve applies L (distributed forward and
    back substitution, muster_jax._factor): no second factorization.

    Args:
      a: A, N x N.
      lower: which triangle of a is read (as jax.scipy).
      overwrite_a, check_finite: accepted and ignored.
      mesh, T_A, provider: as muster_jax.linalg.solve.

    Returns:
      (CholeskyFactor, lower).

    Differences from jax.scipy: A not positive definite raises
    (JaxRuntimeError INVALID_ARGUMENT "not positive definite"; eagerly
    cho_factor waits for the factorization so the error is raised here)
    where jax.scipy returns a factor with NaN; c is not a matrix.
    """
    what = "muster_jax.linalg.cho_factor"
    a = _place.matrix(a, what)
    dtype = _place.inexact(what, a)
    mesh, spec = _place.where(a, mesh, what)
    T_A, provider = _args.tile(T_A, what), _args.provider(provider, what)
    pl = _sharding.prepare(jax.ShapeDtypeStruct(a.shape, dtype), T_A, mesh, spec, False, what)
    cfg = _call.Config(mesh, pl, tuple(spec), T_A, False, False, provider)
    h, l = _program.run(_factor, (a,), mesh, cfg=cfg, dtype=dtype, lower=bool(lower))
    if not _sharding.is_traced(a):
        l.block_until_ready()  # a failed factorization raises here, with its kind
    return CholeskyFactor(h, l, mesh, pl.axis, pl.N, bool(lower)), bool(lower)


def _factor(a, *, cfg, dtype, lower):
    h = _place.from_triangle(a.astype(dtype), cfg.mesh, P(*cfg.spec), lower)
    zero = jnp.zeros((cfg.pl.N, 1), dtype)
    l = cfg.launch(_cholesky_rules.potrs_impl, (jax.lax.stop_gradient(h), zero), keep_factor=True)[0]
    return h, l


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True) -> jax.Array:
    """Solve A x = b with cho_factor's result: jax.scipy.linalg.cho_solve's
    signature.

    Args:
      c_and_lower: (CholeskyFactor, lower) as cho_factor returned it, or
        the CholeskyFactor alone.
      b: (N,) or (N, K).
      overwrite_b, check_finite: accepted and ignored.

    Returns:
      x, b's shape, replicated.  Differentiable in A (through the factor's
      A: potrs's rule, along Hermitian directions of the triangle read)
      and in b, to any order, with no new factorization.
    """
    what = "muster_jax.linalg.cho_solve"
    c = c_and_lower[0] if isinstance(c_and_lower, (tuple, list)) else c_and_lower
    if not isinstance(c, CholeskyFactor):
        raise TypeError(f"{what}: c_and_lower must be what muster_jax.linalg.cho_factor returned, "
                        f"(CholeskyFactor, lower), got {type(c).__name__} (a factor matrix from "
                        "jax.scipy.linalg.cho_factor goes to jax.scipy.linalg.cho_solve)")
    b = _place.rhs(b, c.n, what)
    if b.dtype != c.dtype:
        b = b.astype(c.dtype) if jnp.can_cast(b.dtype, c.dtype) else b
        if b.dtype != c.dtype:
            raise TypeError(f"{what}: b has dtype {b.dtype}, the factor {c.dtype}: pass b.astype({c.dtype})")
    return _program.run(_solve, (c.a, c.factor, b), c.mesh, mesh=c.mesh, axis=c.axis, n=c.n,
                        vec=b.ndim == 1)


def _solve(a, l, b, *, mesh, axis, n, vec):
    x = _algebra.cho_solve(a, l, b[:, None] if vec else b, mesh=mesh, axis=axis, n=n)
    return x[:, 0] if vec else x
