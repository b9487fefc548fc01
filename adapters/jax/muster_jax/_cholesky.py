"""The Cholesky family: potrs (solve A X = B) and potri (inv(A)) for a
Hermitian positive definite A, on a mesh or inside the caller's shard_map.
"""
import jax
from jax.sharding import Mesh, PartitionSpec as P

from . import _args, _call, _cholesky_rules, _local_rules, _mesh_types, _program, _sharding
from ._call import NO_FACTOR, POTRI, POTRS

# ---- inside the caller's shard_map ----------------------------------------------------


def potrs_shardmap_ctx(a: jax.Array, b: jax.Array, T_A: int | None = None, *, axis_name: str = "x",
                       n: int | None = None, cyclic_1d: bool = False, provider: str | None = None,
                       return_status: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Solve A X = B inside the caller's shard_map; differentiable in the
    block layout (jax.grad of a loss through it: _local_rules).

    Args:
      a: this device's column block of A (N x N/ndev), or its cyclic buffer
        if cyclic_1d.
      b: all of B (N x nrhs), on every device.
      T_A: the tile (None: the runtime's choice; required with cyclic_1d).
      axis_name: the mesh axis A is sharded over.
      n: order of A (None: a's rows).
      cyclic_1d: whether a is in the cyclic layout.
      provider: force a provider (None: the runtime's choice).
      return_status: return the status too, and report a failure in it
        (X NaN) instead of raising.

    Returns:
      X (N x nrhs) on every device; (X, status) with return_status, status
      int32[1]: 0 ok, k > 0 the leading minor k is not positive definite,
      < 0 a MUSTER_E* code.
    """
    a, b, T_A, provider = ctx_args("muster_jax.potrs_shardmap_ctx", a, b, T_A, axis_name, provider)
    n = a.shape[0] if n is None else n
    if cyclic_1d:  # not differentiable: the rules read A in column blocks
        _, x, status = _call.local_solve(POTRS, a, b, axis_name=axis_name, n=n, T_A=T_A,
                                         cyclic_1d=cyclic_1d, flags=NO_FACTOR, provider=provider,
                                         return_status=return_status)
    else:
        x, status = _local_rules.solve(POTRS, a, b, axis_name, n, T_A, provider, bool(return_status))
    return (x, status) if return_status else x


def potri_shardmap_ctx(a: jax.Array, T_A: int | None = None, *, axis_name: str = "x",
                       n: int | None = None, cyclic_1d: bool = False, provider: str | None = None,
                       return_status: bool = True) -> jax.Array | tuple[jax.Array, jax.Array]:
    """The inverse of A inside the caller's shard_map.

    Args:
      a: this device's column block of A, or its cyclic buffer if cyclic_1d.
      T_A, axis_name, n, cyclic_1d, provider, return_status: as for
        potrs_shardmap_ctx.

    Returns:
      This device's block of inv(A) (in a's layout); (block, status) with
      return_status.
    """
    a, _, T_A, provider = ctx_args("muster_jax.potri_shardmap_ctx", a, None, T_A, axis_name, provider)
    n = a.shape[0] if n is None else n
    inv, _, status = _call.local_solve(POTRI, a, axis_name=axis_name, n=n, T_A=T_A,
                                       cyclic_1d=cyclic_1d, provider=provider,
                                       return_status=return_status)
    return (inv, status) if return_status else inv


def ctx_args(what: str, a, b, T_A, axis_name, provider) -> tuple:
    """The checked arguments of a *_shardmap_ctx function: (a, b, T_A,
    provider); ValueError / TypeError naming the argument at fault."""
    _args.manual_axis(axis_name, what)
    a = _args.array(a, "a", what)
    _args.nonempty(a, "a", what)
    if a.ndim != 2:
        raise ValueError(f"{what}: a must be this device's 2-D block of A, got shape {a.shape}")
    _args.dtype(a, "a", what)
    if b is not None:
        b = _args.array(b, "b", what)
    return a, b, _args.tile(T_A, what), _args.provider(provider, what)


# jaxmg's names for the same functions
potrs_no_shardmap = potrs_shardmap_ctx
potri_no_shardmap = potri_shardmap_ctx


# ---- on a mesh ------------------------------------------------------------------------------


def potrs(a: jax.Array, b: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
          in_specs: tuple | list | None = None, return_status: bool = False, cyclic_1d: bool = False,
          provider: str | None = None, return_logdet: bool = False) -> jax.Array | tuple[jax.Array, ...]:
    """Solve A X = B for Hermitian positive definite A sharded over `mesh`.

    A and b are not modified.

    Args:
      a: A (N x N), or its cyclic form (cyclic_1d_layout) if cyclic_1d.
      b: B, (N,) or (N, nrhs), of a's dtype.
      T_A: tile of the cyclic layout (None: the runtime's choice; required
        with cyclic_1d).
      mesh: the mesh (None: the one of `with jax.set_mesh(...)`).
      in_specs: (spec of a, spec of b); a P(None, 'x') or P('x', None), b
        P(None, None) or P('x', None).  None: columns over the mesh's first
        axis, b replicated.
      return_status: return the status too, and return NaNs for a failed
        solve instead of raising.
      cyclic_1d: whether a is in the cyclic layout.
      provider: force a provider (None: the runtime's choice).
      return_logdet: also return log det A (a real scalar, from A's
        Cholesky factor: no second factorization; its derivative costs a
        potri).

    Returns:
      X, replicated (1-D if b was); (X, status) with return_status, status
      an int32: 0, k > 0 for a leading minor that is not positive definite,
      or a negative MUSTER_E* code (strerror names it); (X, logdet) with
      return_logdet, (X, logdet, status) with both.
    """
    what = "muster_jax.potrs"
    a, b, T_A, provider, mesh = mesh_args(what, a, b, T_A, provider, mesh)
    if in_specs is None:
        in_specs = (P(None, mesh.axis_names[0]), P(None, None))
    if not isinstance(in_specs, (tuple, list)) or len(in_specs) != 2:
        raise ValueError(f"{what}: in_specs must be (spec of a, spec of b), got {in_specs}")
    pl = _sharding.prepare(a, T_A, mesh, in_specs[0], cyclic_1d, what)
    _sharding.check_b_spec(in_specs[1], pl.axis, what)
    vec = b.ndim == 1
    if b.ndim not in (1, 2) or b.shape[0] != pl.N:
        raise ValueError(f"{what}: b must be ({pl.N},) or ({pl.N}, nrhs), got {b.shape}")
    if b.dtype != a.dtype:
        raise TypeError(f"{what}: b has dtype {b.dtype}, a has {a.dtype}: pass b.astype(a.dtype)")
    cfg = _call.Config(mesh, pl, tuple(in_specs[0]), T_A, bool(return_status), bool(cyclic_1d),
                                 provider)
    if return_logdet and cyclic_1d:
        raise NotImplementedError(f"{what}: return_logdet needs A in the block layout (cyclic_1d=False)")
    return _program.run(_potrs_program, (a, b), mesh, cfg=cfg, logdet=bool(return_logdet), vec=vec)


def _potrs_program(a, b, *, cfg, logdet, vec):
    x, ld, status = _cholesky_rules.potrs(cfg, logdet, a, b[:, None] if vec else b)
    if vec:
        x = x[:, 0]
    out = (x,) + ((ld,) if logdet else ()) + ((status,) if cfg.return_status else ())
    return out if len(out) > 1 else x


def mesh_args(what: str, a, b, T_A, provider, mesh) -> tuple:
    """The checked arguments of a function on a mesh: (a, b, T_A,
    provider, mesh); ValueError / TypeError naming the argument at fault."""
    a = _args.array(a, "a", what)
    _args.nonempty(a, "a", what)
    if a.ndim == 2:
        _args.dtype(a, "a", what)
    mesh = _sharding.mesh_or_context(mesh)
    _args.on_mesh(a, "a", mesh, what)
    if b is not None:
        b = _args.array(b, "b", what)
        _args.on_mesh(b, "b", mesh, what)
    mesh = _mesh_types.for_call(mesh, a, b)
    return a, b, _args.tile(T_A, what), _args.provider(provider, what), mesh


def potri(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
          in_specs: P | tuple | list | None = None, return_status: bool = False,
          cyclic_1d: bool = False, provider: str | None = None) -> jax.Array | tuple[jax.Array, jax.Array]:
    """The full inverse of a Hermitian positive definite A, sharded like a.

    Args:
      a: A (N x N), or its cyclic form if cyclic_1d.
      T_A, mesh, return_status, cyclic_1d, provider: as for potrs.
      in_specs: the spec of a (or a 1-tuple of it); None: columns over the
        mesh's first axis.

    Returns:
      inv(A), sharded like a (replicated when N does not divide evenly over
      the devices; in the cyclic layout with cyclic_1d: cyclic_1d_to_block
      turns it back); (inv(A), status) with return_status.
    """
    what = "muster_jax.potri"
    a, _, T_A, provider, mesh = mesh_args(what, a, None, T_A, provider, mesh)
    spec = _sharding.single_spec(in_specs, mesh)
    pl = _sharding.prepare(a, T_A, mesh, spec, cyclic_1d, what)
    cfg = _call.Config(mesh, pl, tuple(spec), T_A, bool(return_status), bool(cyclic_1d), provider)
    return _program.run(_potri_program, (a,), mesh, cfg=cfg)


def _potri_program(a, *, cfg):
    inv, status = _cholesky_rules.potri(cfg, a)
    inv = _mesh_types.follow(inv, a, cfg.mesh)
    return (inv, status) if cfg.return_status else inv

