"""lstsq: jnp.linalg.lstsq's (x, resid, rank, s) on muster's gels (x) and
gesvd (s)."""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

from .. import _algebra, _args, _factor_rules, _factors, _general, _program, _sharding
from . import _place


def lstsq(a, b, rcond: float | None = None, *, numpy_resid: bool = False, mesh: Mesh | None = None,
          T_A: int | None = None, provider: str | None = None) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Least squares min ||A x - b||: jnp.linalg.lstsq's signature and
    (x, resid, rank, s) result, x from muster's gels (QR).

    Args:
      a: A, M x N with M >= N, of full column rank.
      b: (M,) or (M, K).
      rcond: None only: gels refuses a rank-deficient A (raises "rank
        deficient") rather than cutting small singular values.
      numpy_resid: resid empty when M == N (NumPy's rule; the rank is N).
      mesh, T_A, provider: as muster_jax.linalg.solve.

    Returns:
      x: (N,) or (N, K), replicated (gels).
      resid: ||b - A x||^2 per column, (K,) ((1,) for a 1-D b, as jnp).
      rank: N (an int array): an A of lower rank raises instead.
      s: A's singular values, descending, from muster's gesvd (values
        only), as jnp's.  Under jax.jit, leaving s unused drops that call.

    Differences from jnp: M < N and rank-deficient A are refused; no batch
    dimensions.  Derivatives: x by least_squares's rule, s by the SVD's.
    """
    what = "muster_jax.linalg.lstsq"
    if rcond is not None:
        raise ValueError(f"{what}: rcond={rcond!r} is not supported: muster's gels (QR) refuses a "
                         "rank-deficient a instead of truncating its singular values; pass rcond=None")
    a = _place.matrix(a, what, square=False)
    if a.shape[0] < a.shape[1]:
        raise ValueError(f"{what}: a must have at least as many rows as columns (M >= N), got shape {a.shape}; "
                         "for a wide a solve the transposed problem")
    b = _place.rhs(b, a.shape[0], what)
    dtype = _place.inexact(what, a, b)
    mesh, spec = _place.where(a, mesh, what)
    T_A, provider = _args.tile(T_A, what), _args.provider(provider, what)
    return _program.run(_body, (a, b), mesh, mesh=mesh, spec=spec, dtype=dtype, vec=b.ndim == 1,
                        numpy_resid=bool(numpy_resid), T_A=T_A, provider=provider)


def _body(a, b, *, mesh, spec, dtype, vec, numpy_resid, T_A, provider):
    a, b = a.astype(dtype), b.astype(dtype)
    b2 = b[:, None] if vec else b
    m, n = a.shape
    x = _general.least_squares(a, b2, T_A, mesh, spec, provider=provider)
    rep = P(None, None)
    if numpy_resid and m == n:
        resid = jnp.zeros((0,), jnp.finfo(dtype).dtype)
    else:
        r = _sharding.constrain(b2, mesh, rep) - _algebra.mm(a, x, mesh, rep)
        resid = jnp.sum(jnp.abs(r) ** 2, axis=0)
    cfg = _factors.config(a, mesh, spec, None, provider, "muster_jax.linalg.lstsq")
    s = _factor_rules.svd(cfg, False, False, a)[0]
    rank = jnp.asarray(n, dtype=int)
    return (x[:, 0] if vec else x), resid, rank, s
