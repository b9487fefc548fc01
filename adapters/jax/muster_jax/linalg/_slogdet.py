"""slogdet: jnp.linalg.slogdet's SlogdetResult, from potrs's log det for a
positive definite A and syevd's eigenvalues for a Hermitian one."""
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

from .. import _args, _cholesky, _eigh, _program
from . import _batch, _place
from ._results import SlogdetResult


def slogdet(a, *, method: str | None = None, assume_a: str = "gen", mesh: Mesh | None = None,
            T_A: int | None = None, provider: str | None = None) -> SlogdetResult:
    """Sign and log |det A|: jnp.linalg.slogdet's signature and
    SlogdetResult(sign, logabsdet), plus assume_a.

    assume_a="pos" (Hermitian positive definite): log det A = 2 sum log
    L_ii from muster's potrs (the Hermitian matrix of the lower triangle),
    sign 1.  "her" / "sym" (Hermitian): syevd's eigenvalues w of the lower
    triangle's Hermitian matrix, sign prod sign(w_i), log |det| = sum
    log |w_i|.  "gen" (the default, as jnp): jnp.linalg.slogdet itself
    (XLA's LU on the whole matrix, gathered onto each device: muster's
    getrs does not hand back its LU factors, muster.h), so no muster
    solver runs.

    Args:
      a: A, N x N.
      method: None only (jnp's "lu" / "qr" choose XLA's algorithm).
      assume_a: "gen", "sym", "her" or "pos".
      mesh, T_A, provider: as muster_jax.linalg.solve.

    Returns:
      SlogdetResult(sign (a's dtype), logabsdet (real)).

    A batch (..., N, N) is done one matrix after another.

    Differences from jnp: with "pos" an A that is not positive definite
    raises (JaxRuntimeError INVALID_ARGUMENT) where jnp returns its sign
    and log |det|.  Derivatives: potrs's log det rule (one potri), or
    syevd's eigenvalue rule.
    """
    what = "muster_jax.linalg.slogdet"
    if method is not None:
        raise ValueError(f"{what}: method={method!r} is not supported (assume_a picks muster's routine); "
                         "pass method=None")
    assume = _place.assume(assume_a, what)
    a = _args.array(a, "a", what)
    if a.ndim > 2 and assume != "gen":
        m = _place.where(a, mesh, what)[0]
        return _batch.run(slogdet, (a,), m, assume_a=assume, mesh=m, T_A=T_A, provider=provider)
    if assume == "gen":
        return SlogdetResult(*jnp.linalg.slogdet(jnp.asarray(a).astype(_place.inexact(what, a))))
    a = _place.matrix(a, what)
    dtype = _place.inexact(what, a)
    mesh, spec = _place.where(a, mesh, what)
    T_A, provider = _args.tile(T_A, what), _args.provider(provider, what)
    return SlogdetResult(*_program.run(_body, (a,), mesh, mesh=mesh, spec=spec, dtype=dtype,
                                       pos=assume == "pos", T_A=T_A, provider=provider))


def _body(a, *, mesh, spec, dtype, pos, T_A, provider):
    h = _place.from_triangle(a.astype(dtype), mesh, spec, True)
    if pos:
        _, ld = _cholesky.potrs(h, jnp.zeros((a.shape[0], 1), dtype), T_A, mesh, (spec, P(None, None)),
                                provider=provider, return_logdet=True)
        return jnp.ones((), dtype), ld
    w = _eigh.syevd(h, T_A, mesh, spec, return_eigenvectors=False, provider=provider)
    return jnp.prod(jnp.sign(w)).astype(dtype), jnp.sum(jnp.log(jnp.abs(w)))
