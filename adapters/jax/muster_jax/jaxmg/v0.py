"""jaxmg 0.0.x's API on muster: import muster_jax.jaxmg.v0 as jaxmg.

A is row-sharded, P("x", None), as jaxmg 0.0.x takes it (column-sharded
works too), b replicated.  `pad` is accepted and ignored: muster always
pads what it needs.  T_A is a hint (see _common.tile).  jaxmg 0.0.9's
layout helpers (cyclic_1d, pad_rows, unpad_rows, get_cols_cyclic,
verify_cyclic) are in _cyclic_rows, plot_block_to_cyclic in _plot.
"""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

from .. import _args, _cholesky, _eigh, _groups, _sharding
from .._cyclic import cyclic_1d_layout
from .._layout import calculate_all_valid_T_A
from ._common import manual_axis, tile
from ._cyclic_rows import calculate_padding, cyclic_1d, get_cols_cyclic, pad_rows, unpad_rows, verify_cyclic
from ._plot import plot_block_to_cyclic

__all__ = ["potrs", "potri", "syevd", "potrs_shardmap_ctx", "potri_shardmap_ctx", "syevd_shardmap_ctx",
           "potrs_no_shardmap", "potri_no_shardmap", "syevd_no_shardmap", "potri_symmetrize",
           "cyclic_1d_layout", "calculate_all_valid_T_A", "calculate_padding", "cyclic_1d", "pad_rows",
           "unpad_rows", "verify_cyclic", "get_cols_cyclic", "plot_block_to_cyclic"]


def _ndev(mesh: Mesh, spec: P) -> int:
    return _sharding.axis_size(mesh, _sharding.axis_of(spec, "jaxmg")[1], "jaxmg")


def potrs(a: jax.Array, b: jax.Array, T_A: int, mesh: Mesh, in_specs: tuple | list,
          return_status: bool = False, pad: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Solve A x = b (jaxmg 0.0.x: potrs(a, b, T_A, mesh, in_specs, return_status=False, pad=True)).

    Args:
      a: A, N x N, Hermitian positive definite.
      b: B, (N,) or (N, nrhs).
      T_A: jaxmg's tile (a hint here).
      mesh: the mesh.
      in_specs: (spec of a, spec of b), e.g. (P("x", None), P(None, None)).
      return_status: also return the status (int32; 0 ok).
      pad: ignored (muster pads as it needs).

    Returns:
      x, or (x, status).
    """
    T = tile(T_A, a.shape[0], _ndev(mesh, in_specs[0]))
    return _cholesky.potrs(a, b, T, mesh, in_specs, return_status=return_status)


def potri(a: jax.Array, T_A: int, mesh: Mesh, in_specs: tuple | P, return_status: bool = False,
          pad: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """The inverse of A (jaxmg 0.0.x: potri(a, T_A, mesh, in_specs, return_status=False, pad=True)).
    muster returns both triangles (potri_symmetrize leaves it as it is).

    Returns:
      inv(A), or (inv(A), status).
    """
    spec = _sharding.single_spec(in_specs, mesh)
    return _cholesky.potri(a, tile(T_A, a.shape[0], _ndev(mesh, spec)), mesh, spec,
                           return_status=return_status)


def syevd(a: jax.Array, T_A: int, mesh: Mesh, in_specs: tuple | P, return_eigenvectors: bool = True,
          return_status: bool = False, pad: bool = True):
    """Eigen-decomposition of A (jaxmg 0.0.x: syevd(a, T_A, mesh, in_specs,
    return_eigenvectors=True, return_status=False, pad=True)).

    Returns:
      (w, V), or w without eigenvectors; the status appended with return_status.
    """
    spec = _sharding.single_spec(in_specs, mesh)
    return _eigh.syevd(a, tile(T_A, a.shape[0], _ndev(mesh, spec)), mesh, spec,
                       return_eigenvectors=return_eigenvectors, return_status=return_status)


def _local_a(a, axis: str, what: str) -> jax.Array:
    """This device's column block of A from the block jaxmg's
    *_shardmap_ctx were given.  jaxmg 0.0.x takes a row block (N/ndev x N);
    a column block (N x N/ndev) is taken as well: the local shape says
    which it is, at trace time.  A row block of a Hermitian A is the
    conjugate transpose of its column block.

    Raises:
      ValueError: the shape is neither (the message says what fits).
    """
    a = _args.array(a, "a", what)
    if a.ndim != 2:
        raise ValueError(f"{what}: a must be this device's 2-D block of A, got shape {a.shape}")
    R = _groups.axis_size(axis)
    rows, cols = a.shape
    if rows * R == cols:  # a row block (jaxmg 0.0.x's orientation; R = 1: the whole matrix)
        return _sharding.to_colblock(a, 0)
    if cols * R == rows:  # a column block
        return a
    raise ValueError(f"{what}: a has local shape {a.shape} on {R} devices along {axis!r}: pass this "
                     f"device's row block, ({rows} x {rows * R}) for N={rows * R} (jaxmg 0.0.x's "
                     f"P({axis!r}, None)), or its column block, ({cols * R} x {cols}) for N={cols * R} "
                     f"(P(None, {axis!r})); pad A to a multiple of {R} first")


def potrs_shardmap_ctx(a: jax.Array, b: jax.Array, T_A: int, pad: bool = True) -> tuple[jax.Array, jax.Array]:
    """potrs inside the caller's shard_map (jaxmg 0.0.x).

    Args:
      a: this device's row block of A (N/ndev x N), as jaxmg takes it, or
        its column block (N x N/ndev); the local shape says which.
      b: all of B (N x nrhs).
      T_A, pad: as for potrs.

    Returns:
      (x, status int32[1]).
    """
    what = "jaxmg.potrs_shardmap_ctx"
    axis = manual_axis(what)
    return _cholesky.potrs_shardmap_ctx(_local_a(a, axis, what), b, None, axis_name=axis, return_status=True)


def potri_shardmap_ctx(a: jax.Array, T_A: int, pad: bool = True) -> tuple[jax.Array, jax.Array]:
    """potri inside the caller's shard_map (jaxmg 0.0.x): (this device's row
    block of inv(A), status)."""
    what = "jaxmg.potri_shardmap_ctx"
    axis = manual_axis(what)
    a = _args.array(a, "a", what)
    inv, status = _cholesky.potri_shardmap_ctx(_local_a(a, axis, what), None, axis_name=axis,
                                               return_status=True)
    return (_sharding.to_colblock(inv, 0) if a.shape[0] * _groups.axis_size(axis) == a.shape[1] else inv), status


def syevd_shardmap_ctx(a: jax.Array, T_A: int, return_eigenvectors: bool = True, pad: bool = True):
    """syevd inside the caller's shard_map (jaxmg 0.0.x): (w, this device's
    column block of V, status), or (w, status)."""
    what = "jaxmg.syevd_shardmap_ctx"
    axis = manual_axis(what)
    return _eigh.syevd_shardmap_ctx(_local_a(a, axis, what), None, axis_name=axis,
                                    return_eigenvectors=return_eigenvectors, return_status=True)


# jaxmg's later 0.0.x names for the same functions
potrs_no_shardmap = potrs_shardmap_ctx
potri_no_shardmap = potri_shardmap_ctx
syevd_no_shardmap = syevd_shardmap_ctx


def potri_symmetrize(a: jax.Array) -> jax.Array:
    """Both triangles from the upper one (jaxmg's potri filled one)."""
    u = jnp.triu(a)
    return u + jnp.conj(u).T - jnp.diag(jnp.diag(u))
