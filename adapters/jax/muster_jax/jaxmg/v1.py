"""jaxmg 1.4.x's API on muster: import muster_jax.jaxmg.v1 as jaxmg.

The mesh and the matrix's PartitionSpec are read off a's sharding when
not given; a one-axis spec P("x") (rows) or P(None, "x") (columns) is
taken as it is, and a two-axis one, P("x", "y") (jaxmg's 2-D grid), is
taken as A's columns spread over both axes, P(None, ("x", "y")): muster
spreads A over one dimension, so A is resharded once (an all-to-all) before
the solve.  T_A is a hint (see _common.tile), `pad` is ignored (muster pads as
it needs) and `donate` too: muster never invalidates the caller's arrays,
so a program written for donate=True runs unchanged.  The *_shardmap_ctx
forms (for a caller-owned jax.jit, work buffers first) are in _v1_ctx, and
__version__ is muster_jax's.
"""
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from .. import _cholesky, _eigh, _general, _lib, _sharding
from ._common import tile

__all__ = ["__version__", "potrs", "potri", "syevd", "lu_solve", "least_squares", "potrs_shardmap_ctx",
           "syevd_shardmap_ctx", "lu_solve_shardmap_ctx", "least_squares_shardmap_ctx", "qr", "gesvd", "polar",
           "qr_shardmap_ctx", "gesvd_shardmap_ctx", "polar_shardmap_ctx"]

# jaxmg's is its distribution's version; this module's is muster_jax's.
__version__ = _lib.version()


def _layout_of(a: jax.Array, mesh: Mesh | None, matrix_specs, in_specs, what: str) -> tuple[Mesh, P]:
    """(mesh, A's spec): as given, else read off a's sharding, else the
    context mesh with rows over its first axis; a spec sharding both
    dimensions (P("x", "y")) becomes P(None, ("x", "y")).

    Raises:
      ValueError: a spec that names one mesh axis for both dimensions.
    """
    spec = matrix_specs if matrix_specs is not None else in_specs
    if isinstance(spec, (tuple, list)) and not isinstance(spec, P):
        spec = spec[0]
    sh = getattr(a, "sharding", None)
    if sh is None or not isinstance(sh, NamedSharding):
        sh = getattr(jax.typeof(a), "sharding", None)
    if mesh is None:
        # a traced a's type holds an AbstractMesh: then the context's mesh
        mesh = sh.mesh if isinstance(sh, NamedSharding) and isinstance(sh.mesh, Mesh) else None
        mesh = _sharding.mesh_or_context(mesh)
    if spec is None:
        spec = sh.spec if isinstance(sh, NamedSharding) and any(p is not None for p in sh.spec) \
            else P(mesh.axis_names[0])
    spec = P(*(tuple(spec) + (None,) * (2 - len(tuple(spec)))))
    if all(p is not None for p in spec):
        names = [n for p in spec for n in (p if isinstance(p, (tuple, list)) else (p,))]
        if len(set(names)) != len(names):
            raise ValueError(f"{what}: {spec} names a mesh axis for both dimensions of A; give each "
                             "dimension its own axes, e.g. P('x', 'y'), or shard one, P('x')")
        spec = P(None, tuple(names))
    return mesh, spec


def _ndev(mesh: Mesh, spec: P) -> int:
    return _sharding.axis_size(mesh, _sharding.axis_of(spec, "jaxmg")[1], "jaxmg")


def potrs(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
          in_specs=None, return_status: bool = False, return_logdet: bool = False, pad: bool = True,
          donate: bool = True):
    """Solve A x = b (jaxmg 1.4.x's signature).

    Args:
      a: A, N x N, Hermitian positive definite, sharded over one mesh axis.
      b: B, (N,) or (N, nrhs).
      T_A: jaxmg's tile (a hint here; may be omitted).
      mesh: the mesh (None: a's, else the context's).
      matrix_specs: A's PartitionSpec (None: a's); in_specs: its old name.
      return_status: also return the status (int32; 0 ok).
      return_logdet: also return log det A (from the factor).
      pad, donate: accepted, ignored.

    Returns:
      x, (x, status), (x, logdet) or (x, logdet, status).
    """
    mesh, spec = _layout_of(a, mesh, matrix_specs, in_specs, "jaxmg.potrs")
    return _cholesky.potrs(a, b, tile(T_A, a.shape[0], _ndev(mesh, spec)), mesh, (spec, P(None, None)),
                           return_status=return_status, return_logdet=return_logdet)


def potri(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
          in_specs=None, return_status: bool = False, pad: bool = True, donate: bool = True):
    """The inverse of A (jaxmg 1.4.x's signature; arguments as for potrs).

    Returns:
      inv(A) (both triangles), or (inv(A), status).
    """
    mesh, spec = _layout_of(a, mesh, matrix_specs, in_specs, "jaxmg.potri")
    return _cholesky.potri(a, tile(T_A, a.shape[0], _ndev(mesh, spec)), mesh, spec, return_status=return_status)


def syevd(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
          in_specs=None, return_eigenvectors: bool = True, return_status: bool = False, pad: bool = True,
          donate: bool = True):
    """Eigen-decomposition of A (jaxmg 1.4.x's signature; arguments as for potrs).

    Returns:
      (w, V), or w without eigenvectors; the status appended with return_status.
    """
    mesh, spec = _layout_of(a, mesh, matrix_specs, in_specs, "jaxmg.syevd")
    return _eigh.syevd(a, tile(T_A, a.shape[0], _ndev(mesh, spec)), mesh, spec,
                       return_eigenvectors=return_eigenvectors, return_status=return_status)


def lu_solve(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
             in_specs=None, return_status: bool = False, pad: bool = True,
             donate: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Solve A x = b for a general square A (jaxmg 1.4.x's signature; LU
    with partial pivoting).  Differentiable and batched (jaxmg's is not).

    Args:
      a: A, N x N, nonsingular, sharded over one mesh axis.
      b: B, (N,) or (N, nrhs).
      T_A, mesh, matrix_specs, in_specs, pad, donate: as for potrs.
      return_status: also return the status (int32; 0 ok, k > 0 U(k,k) is
        exactly zero).

    Returns:
      x ((N,) or (N, nrhs), replicated), or (x, status).
    """
    mesh, spec = _layout_of(a, mesh, matrix_specs, in_specs, "jaxmg.lu_solve")
    return _general.lu_solve(a, b, tile(T_A, a.shape[1], _ndev(mesh, spec)), mesh, spec,
                             return_status=return_status)


def least_squares(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
                  matrix_specs=None, *, in_specs=None, return_status: bool = False, pad: bool = True,
                  donate: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """min ||A x - b|| for A M x N, M >= N, of full column rank (jaxmg
    1.4.x's signature; QR).  Differentiable and batched (jaxmg's is not).

    Args:
      a: A, M x N, sharded over one mesh axis.
      b: B, (M,) or (M, nrhs).
      T_A, mesh, matrix_specs, in_specs, pad, donate: as for potrs.
      return_status: also return the status (int32; 0 ok, k > 0 A rank
        deficient at column k).

    Returns:
      x ((N,) or (N, nrhs), replicated), or (x, status).
    """
    mesh, spec = _layout_of(a, mesh, matrix_specs, in_specs, "jaxmg.least_squares")
    return _general.least_squares(a, b, tile(T_A, a.shape[1], _ndev(mesh, spec)), mesh, spec,
                                  return_status=return_status)


# jaxmg 1.4.1's forms for a caller-owned jax.jit (they call the functions above)
from ._v1_ctx import (least_squares_shardmap_ctx, lu_solve_shardmap_ctx,  # noqa: E402
                      potrs_shardmap_ctx, syevd_shardmap_ctx)
# jaxmg 1.4.1's factorizations (geqrf, gesvd, polar), with their ctx forms
from ._v1_factors import (gesvd, gesvd_shardmap_ctx, polar, polar_shardmap_ctx, qr,  # noqa: E402
                          qr_shardmap_ctx)
