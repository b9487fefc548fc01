"""The general (not Hermitian) family: lu_solve (getrs, A X = B for a square
A) and least_squares (gels, min ||A X - B|| for a tall A of full column
rank), on a mesh or inside the caller's shard_map.

A is spread over the devices by columns (a row-sharded A is resharded to
columns first: only a Hermitian A's row block is its column block's
adjoint); B is replicated.  The derivatives are in _general_rules.
"""
import jax
from jax.sharding import Mesh, PartitionSpec as P

from . import _call, _cholesky, _general_rules, _groups, _local_rules, _program, _sharding
from ._call import GELS, GETRS

# ---- inside the caller's shard_map ----------------------------------------------------


def _local(routine: int, a: jax.Array, b: jax.Array, T_A: int | None, axis_name: str, n: int | None,
           provider: str | None, return_status: bool) -> jax.Array | tuple[jax.Array, jax.Array]:
    what = "muster_jax." + ("lu_solve" if routine == GETRS else "least_squares") + "_shardmap_ctx"
    a, b, T_A, provider = _cholesky.ctx_args(what, a, b, T_A, axis_name, provider)
    n = a.shape[0] if n is None else n
    x, status = _local_rules.solve(routine, a, b, axis_name, n, T_A, provider, bool(return_status))
    return (x, status) if return_status else x


def lu_solve_shardmap_ctx(a: jax.Array, b: jax.Array, T_A: int | None = None, *, axis_name: str = "x",
                          n: int | None = None, provider: str | None = None,
                          return_status: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Solve A X = B (general square A, LU with partial pivoting) inside
    the caller's shard_map; differentiable (jax.grad of a loss through
    it, forward and reverse: _local_rules).

    Args:
      a: this device's column block of A (N x w, w = the block width:
        N/ndev rounded up; the last blocks' columns past N are ignored).
      b: all of B (N x nrhs), on every device.
      T_A: the tile (None: the runtime's choice).
      axis_name: the mesh axis A is sharded over.
      n: order of A (None: a's rows).
      provider: force a provider (None: the runtime's choice).
      return_status: return the status too, and report a failure in it
        (X NaN) instead of raising.

    Returns:
      X (N x nrhs) on every device; (X, status) with return_status, status
      int32[1]: 0 ok, k > 0 U(k,k) of the LU factorization is zero or under
      2 n eps max_{i<=k} |U(i,k)| (A singular), < 0 a MUSTER_E* code.
    """
    return _local(GETRS, a, b, T_A, axis_name, n, provider, return_status)


def least_squares_shardmap_ctx(a: jax.Array, b: jax.Array, T_A: int | None = None, *, axis_name: str = "x",
                               n: int | None = None, provider: str | None = None,
                               return_status: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Least squares min ||A X - B|| (A m x n, m >= n, full column rank)
    inside the caller's shard_map; differentiable as lu_solve_shardmap_ctx.

    Args:
      a: this device's column block of A (M x w, w = the block width:
        n/ndev rounded up; the last blocks' columns past n are ignored).
      b: all of B (M x nrhs), on every device.
      T_A, axis_name, provider, return_status: as for lu_solve_shardmap_ctx.
      n: A's columns (required unless every device holds the same number:
        None means ndev * w).

    Returns:
      X (n x nrhs) on every device; (X, status) with return_status, status
      k > 0 when R(k,k) of the QR factorization is zero or below the rank
      threshold (A rank deficient).
    """
    if n is None:
        _cholesky.ctx_args("muster_jax.least_squares_shardmap_ctx", a, b, T_A, axis_name, provider)
        n = a.shape[1] * _groups.axis_size(axis_name)
    return _local(GELS, a, b, T_A, axis_name, n, provider, return_status)


# ---- on a mesh ------------------------------------------------------------------------------


def _specs(in_specs: P | tuple | list | None, mesh: Mesh, what: str) -> tuple[P, P]:
    """(spec of a, spec of b) from in_specs: None, A's spec alone, or the
    pair."""
    if in_specs is None:
        return P(None, mesh.axis_names[0]), P(None, None)
    if isinstance(in_specs, P):
        return in_specs, P(None, None)
    if isinstance(in_specs, (tuple, list)) and len(in_specs) in (1, 2):
        return in_specs[0], (in_specs[1] if len(in_specs) == 2 else P(None, None))
    raise ValueError(f"{what}: in_specs must be A's PartitionSpec or (spec of a, spec of b), got {in_specs}")


def _solve(routine: int, what: str, a: jax.Array, b: jax.Array, T_A: int | None, mesh: Mesh | None,
           in_specs, return_status: bool, provider: str | None) -> jax.Array | tuple[jax.Array, jax.Array]:
    a, b, T_A, provider, mesh = _cholesky.mesh_args(what, a, b, T_A, provider, mesh)
    a_spec, b_spec = _specs(in_specs, mesh, what)
    pl = _sharding.prepare_general(a, T_A, mesh, a_spec, routine == GELS, what)
    _sharding.check_b_spec(b_spec, pl.axis, what)
    vec = b.ndim == 1
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(f"{what}: b must be ({a.shape[0]},) or ({a.shape[0]}, nrhs), got {b.shape}")
    if b.dtype != a.dtype:
        raise TypeError(f"{what}: b has dtype {b.dtype}, a has {a.dtype}: pass b.astype(a.dtype)")
    cfg = _call.Config(mesh, pl, tuple(a_spec), T_A, bool(return_status), False, provider)
    return _program.run(_solve_program, (a, b), mesh, cfg=cfg, routine=routine, vec=vec)


def _solve_program(a, b, *, cfg, routine, vec):
    x, status = _general_rules.solve(cfg, routine, a, b[:, None] if vec else b)
    if vec:
        x = x[:, 0]
    return (x, status) if cfg.return_status else x


def lu_solve(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
             in_specs: P | tuple | list | None = None, return_status: bool = False,
             provider: str | None = None) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Solve A X = B for a general square A sharded over `mesh` (LU with
    partial pivoting).  Differentiable (jax.grad, jacfwd, jacrev, to any
    order) and batched by jax.vmap.  A and b are not modified.

    Args:
      a: A (N x N), nonsingular.
      b: B, (N,) or (N, nrhs), of a's dtype.
      T_A: the tile (None: the runtime's choice; checked when given).
      mesh: the mesh (None: the one of `with jax.set_mesh(...)`).
      in_specs: A's PartitionSpec, or (spec of a, spec of b): a
        P(None, 'x') or P('x', None) (resharded to columns), b
        P(None, None) or P('x', None).  None: columns over the mesh's first
        axis, b replicated.
      return_status: return the status too, and return NaNs for a failed
        solve instead of raising.
      provider: force a provider (None: the runtime's choice).

    Returns:
      X, replicated (1-D if b was); (X, status) with return_status, status
      an int32: 0, k > 0 when U(k,k) of the LU factorization is zero or
      under 2 n eps max_{i<=k} |U(i,k)| (A singular), or a negative
      MUSTER_E* code (strerror names it).

    Raises:
      ValueError: A singular (the message names the zero pivot), shapes or
        specs that do not fit; TypeError: dtypes.
    """
    return _solve(GETRS, "muster_jax.lu_solve", a, b, T_A, mesh, in_specs, return_status, provider)


def least_squares(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
                  in_specs: P | tuple | list | None = None, return_status: bool = False,
                  provider: str | None = None) -> jax.Array | tuple[jax.Array, jax.Array]:
    """The least-squares solution of A X = B, min ||A X - B||_2, for a tall
    A (M x N, M >= N) of full column rank sharded over `mesh` (QR).
    Differentiable (jax.grad, jacfwd, jacrev, to any order) and batched by
    jax.vmap.  A and b are not modified.

    Args:
      a: A (M x N), M >= N, full column rank.
      b: B, (M,) or (M, nrhs), of a's dtype.
      T_A, mesh, in_specs, return_status, provider: as for lu_solve (T_A
        is checked against N, A's columns).

    Returns:
      X (N,) or (N, nrhs), replicated; (X, status) with return_status,
      status k > 0 when R(k,k) of the QR factorization is zero or below the
      rank threshold (A rank deficient).

    Raises:
      ValueError: A rank deficient (the message names the column), M < N,
        shapes or specs that do not fit; TypeError: dtypes.
    """
    return _solve(GELS, "muster_jax.least_squares", a, b, T_A, mesh, in_specs, return_status, provider)
