"""eigh and eigvalsh: jnp.linalg's names on muster's syevd."""
import jax
from jax.sharding import Mesh

from .. import _args, _eigh, _mesh_types, _program
from . import _batch, _place
from ._results import EighResult


def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True, *, mesh: Mesh | None = None,
         T_A: int | None = None, provider: str | None = None) -> EighResult:
    """Eigenvalues and eigenvectors of a Hermitian A: jnp.linalg.eigh's
    signature and EighResult(eigenvalues, eigenvectors), on muster's syevd.

    Args:
      a: A, N x N.
      UPLO: the triangle read when symmetrize_input=False, "L" (None) or "U".
      symmetrize_input: use (a + a^H) / 2 (jnp's default: one transpose of
        A across the devices; pass False with a Hermitian a to skip it).
      mesh, T_A, provider: as muster_jax.linalg.solve.

    Returns:
      EighResult: eigenvalues (N,) ascending, replicated; eigenvectors as
      columns, N x N, column-sharded over the mesh (replicated when N does
      not divide evenly over the devices).

    A batch (..., N, N) is solved one matrix after another.

    Differences from jnp.linalg.eigh: a failure raises (JaxRuntimeError).  Derivatives: syevd's rule,
    the one jnp uses (eigenvectors need distinct eigenvalues).
    """
    out = _call("muster_jax.linalg.eigh", a, UPLO or "L", symmetrize_input, True, mesh, T_A, provider)
    return out if isinstance(out, EighResult) else EighResult(*out)


def eigvalsh(a, UPLO: str | None = "L", *, symmetrize_input: bool = True, mesh: Mesh | None = None,
             T_A: int | None = None, provider: str | None = None) -> jax.Array:
    """Eigenvalues of a Hermitian A, ascending: jnp.linalg.eigvalsh's
    signature, on muster's syevd without vectors (arguments as eigh)."""
    return _call("muster_jax.linalg.eigvalsh", a, UPLO or "L", symmetrize_input, False, mesh, T_A, provider)


def _call(what, a, uplo, symmetrize, vectors, mesh, T_A, provider):
    lower = _place.uplo(uplo, what)
    a = _args.array(a, "a", what)
    if a.ndim > 2:
        m = _place.where(a, mesh, what)[0]
        fn = eigh if vectors else eigvalsh
        return _batch.run(fn, (a,), m, UPLO=uplo, symmetrize_input=bool(symmetrize), mesh=m, T_A=T_A,
                          provider=provider)
    a = _place.matrix(a, what)
    dtype = _place.inexact(what, a)
    mesh, spec = _place.where(a, mesh, what)
    T_A, provider = _args.tile(T_A, what), _args.provider(provider, what)
    return _program.run(_body, (a,), mesh, mesh=mesh, spec=spec, dtype=dtype, lower=lower,
                        symmetrize=bool(symmetrize), vectors=vectors, T_A=T_A, provider=provider)


def _body(a, *, mesh, spec, dtype, lower, symmetrize, vectors, T_A, provider):
    a = a.astype(dtype)
    h = _place.hermitian_part(a, mesh, spec) if symmetrize else _place.from_triangle(a, mesh, spec, lower)
    out = _eigh.syevd(h, T_A, mesh, spec, return_eigenvectors=vectors, provider=provider)
    return (out[0], _mesh_types.follow(out[1], a, mesh)) if vectors else out
