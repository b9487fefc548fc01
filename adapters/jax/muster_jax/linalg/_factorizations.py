"""qr, svd, svdvals and polar: jnp.linalg's and jax.scipy.linalg's names on
muster's geqrf, gesvd and polar (docs/factorizations.md)."""
import jax
from jax.sharding import Mesh

from .. import _args, _factor_rules, _factors, _program
from . import _batch, _place
from ._results import QRResult, SVDResult

_QR_MODES = ("reduced", "complete", "r")


def qr(a, mode: str = "reduced", *, mesh: Mesh | None = None, T_A: int | None = None,
       provider: str | None = None) -> QRResult | jax.Array:
    """QR decomposition A = Q R: jnp.linalg.qr's signature and QRResult(Q,
    R), on muster's geqrf (Householder QR, then Q explicitly).

    Args:
      a: A, M x N, tall or wide (or (..., M, N): one matrix after another).
      mode: "reduced" (Q M x K, R K x N, K = min(M, N)), "complete" (Q
        M x M, R M x N) or "r" (R alone, K x N).
      mesh, T_A, provider: as muster_jax.linalg.solve.

    Returns:
      QRResult(Q, R), or R for mode="r".  The factor with A's shape stays
      sharded like A (Q of a tall A; R of a wide one); the other is
      replicated.  R's diagonal may have either sign (LAPACK's, as jnp).

    Derivatives: JAX's rule for reduced QR of any shape; mode="complete"
    of a tall A has none (NotImplementedError; jnp's has).
    """
    what = "muster_jax.linalg.qr"
    if mode not in _QR_MODES:
        raise ValueError(f"{what}: mode must be one of {_QR_MODES}, got {mode!r}")
    return _run(qr, _qr_body, a, mesh, T_A, provider, what, mode=mode)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None, *, mesh: Mesh | None = None, T_A: int | None = None,
        provider: str | None = None) -> SVDResult | jax.Array:
    """Singular value decomposition A = U diag(S) V^H: jnp.linalg.svd's
    signature and SVDResult(U, S, Vh), on muster's gesvd (QR iteration).

    Args:
      a: A, M x N, tall or wide (or a batch (..., M, N)).
      full_matrices: U M x M and Vh N x N (jnp's default); False: U M x K,
        Vh K x N (K = min(M, N)).
      compute_uv: False returns S alone (svdvals).
      hermitian: accepted for jnp's signature; the general SVD is used.
      subset_by_index: None only (muster computes every singular value).
      mesh, T_A, provider: as muster_jax.linalg.solve.

    Returns:
      SVDResult(U, S, Vh), S (K,) descending and replicated; S alone
      without compute_uv.  Thin vectors: the one with A's shape stays
      sharded like A, the other is replicated; full ones are replicated.

    Derivatives: JAX's rule (distinct singular values for the vectors);
    full_matrices=True of a non-square A has none (as jnp).
    """
    what = "muster_jax.linalg.svd"
    if subset_by_index is not None:
        raise ValueError(f"{what}: subset_by_index={subset_by_index!r} is not supported: muster's gesvd "
                         "computes every singular value; pass None and slice S")
    return _run(svd, _svd_body, a, mesh, T_A, provider, what, full_matrices=bool(full_matrices),
                compute_uv=bool(compute_uv))


def svdvals(x, /, *, mesh: Mesh | None = None, T_A: int | None = None, provider: str | None = None) -> jax.Array:
    """The singular values of x, descending: jnp.linalg.svdvals, on
    gesvd without vectors."""
    return svd(x, compute_uv=False, mesh=mesh, T_A=T_A, provider=provider)


def polar(a, side: str = "right", *, method: str = "svd", eps: float | None = None,
          max_iterations: int | None = None, mesh: Mesh | None = None, T_A: int | None = None,
          provider: str | None = None) -> tuple[jax.Array, jax.Array]:
    """Polar decomposition: jax.scipy.linalg.polar's signature and (u, p)
    result, on muster's polar (from the thin SVD).

    Args:
      a: A, M x N, tall or wide (or a batch (..., M, N)).
      side: "right", A = u p (p N x N), or "left", A = p u (p M x M).
      method, eps, max_iterations: accepted for the signature; muster
        computes the factors from the SVD whatever they say.
      mesh, T_A, provider: as muster_jax.linalg.solve.

    Returns:
      (u, p): u M x N with orthonormal columns (rows when M < N), p
      Hermitian positive semidefinite.  side="right": u sharded like A, p
      replicated; "left" solves A^H's right decomposition, so both come
      back replicated.

    Derivatives: through the SVD's rule (distinct singular values).
    """
    what = "muster_jax.linalg.polar"
    if side not in ("right", "left"):
        raise ValueError(f"{what}: side must be 'right' or 'left', got {side!r}")
    return _run(polar, _polar_body, a, mesh, T_A, provider, what, side=side)


def _run(fn, body, a, mesh, T_A, provider, what, **kw):
    """A public function's call: a batch (..., M, N) one matrix after
    another (fn again, _batch), a matrix as one program of body."""
    a = _args.array(a, "a", what)
    if a.ndim > 2:
        m = _place.where(a, mesh, what)[0]
        return _batch.run(fn, (a,), m, mesh=m, T_A=T_A, provider=provider, **kw)
    a = _place.matrix(a, what, square=False)
    dtype = _place.inexact(what, a)
    mesh, spec = _place.where(a, mesh, what)
    return _program.run(body, (a,), mesh, mesh=mesh, spec=spec, dtype=dtype, T_A=_args.tile(T_A, what),
                        provider=_args.provider(provider, what), what=what, **kw)


def _qr_body(a, *, mesh, spec, dtype, mode, T_A, provider, what):
    a = a.astype(dtype)
    q, r = _factor_rules.qr(_factors.config(a, mesh, spec, T_A, provider, what), mode == "complete", a)
    return r if mode == "r" else QRResult(q, r)


def _svd_body(a, *, mesh, spec, dtype, full_matrices, compute_uv, T_A, provider, what):
    a = a.astype(dtype)
    out = _factor_rules.svd(_factors.config(a, mesh, spec, T_A, provider, what), full_matrices, compute_uv, a)
    return SVDResult(*out) if compute_uv else out[0]


def _polar_body(a, *, mesh, spec, dtype, side, T_A, provider, what):
    a = a.astype(dtype)
    if side == "right":
        return _factor_rules.polar(_factors.config(a, mesh, spec, T_A, provider, what), a)
    ah = a.conj().T  # A^H = u' p'  gives  A = p' u'^H
    u, p = _factor_rules.polar(_factors.config(ah, mesh, spec, T_A, provider, what), ah)
    return u.conj().T, p
