"""The Hermitian eigensolver family: syevd (eigenvalues and eigenvectors of
a Hermitian A), on a mesh or inside the caller's shard_map.
"""
import jax
from jax.sharding import Mesh, PartitionSpec as P

from . import _call, _cholesky, _eigh_rules, _mesh_types, _program, _sharding
from ._call import NO_VECTORS, SYEVD


def syevd_shardmap_ctx(a: jax.Array, T_A: int | None = None, *, axis_name: str = "x",
                       n: int | None = None, cyclic_1d: bool = False, provider: str | None = None,
                       return_eigenvectors: bool = True,
                       return_status: bool = True) -> jax.Array | tuple[jax.Array, ...]:
    """Eigenvalues and eigenvectors of A inside the caller's shard_map.

    Args:
      a: this device's column block of A, or its cyclic buffer if cyclic_1d.
      T_A: the tile (None: the runtime's choice; required with cyclic_1d).
      axis_name: the mesh axis A is sharded over.
      n: order of A (None: a's rows).
      cyclic_1d: whether a is in the cyclic layout.
      provider: force a provider (None: the runtime's choice).
      return_eigenvectors: compute the eigenvectors too.
      return_status: return the status too, and report a failure in it
        (outputs NaN) instead of raising.

    Returns:
      (eigenvalues (N,) ascending, this device's block of the
      eigenvectors, status); without return_eigenvectors (eigenvalues,
      status); without return_status the same less the status (the
      eigenvalues alone, not a 1-tuple).
    """
    a, _, T_A, provider = _cholesky.ctx_args("muster_jax.syevd_shardmap_ctx", a, None, T_A, axis_name, provider)
    n = a.shape[0] if n is None else n
    v, w, status = _call.local_solve(SYEVD, a, axis_name=axis_name, n=n, T_A=T_A, cyclic_1d=cyclic_1d,
                                     flags=0 if return_eigenvectors else NO_VECTORS, provider=provider,
                                     return_status=return_status)
    out = (w, v) if return_eigenvectors else (w,)
    return out + (status,) if return_status else (out if return_eigenvectors else w)


# jaxmg's name for the same function
syevd_no_shardmap = syevd_shardmap_ctx


def syevd(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None,
          in_specs: P | tuple | list | None = None, return_eigenvectors: bool = True,
          return_status: bool = False, cyclic_1d: bool = False,
          provider: str | None = None) -> jax.Array | tuple[jax.Array, ...]:
    """Eigenvalues and eigenvectors of a Hermitian A sharded over `mesh`.

    Args:
      a: A (N x N), or its cyclic form (cyclic_1d_layout) if cyclic_1d.
      T_A: tile of the cyclic layout (None: the runtime's choice; required
        with cyclic_1d).
      mesh: the mesh (None: the one of `with jax.set_mesh(...)`).
      in_specs: the spec of a (or a 1-tuple of it); None: columns over the
        mesh's first axis.
      return_eigenvectors: compute the eigenvectors too.
      return_status: append the status (as potrs's), and return NaNs for a
        failed solve instead of raising.
      cyclic_1d: whether a is in the cyclic layout.
      provider: force a provider (None: the runtime's choice).

    Returns:
      (eigenvalues, eigenvectors): the eigenvalues ascending and
      replicated, the eigenvectors as columns sharded P(None, axis)
      (replicated when N does not divide evenly over the devices); the
      eigenvalues alone without return_eigenvectors; the status appended
      with return_status.
    """
    what = "muster_jax.syevd"
    a, _, T_A, provider, mesh = _cholesky.mesh_args(what, a, None, T_A, provider, mesh)
    spec = _sharding.single_spec(in_specs, mesh)
    pl = _sharding.prepare(a, T_A, mesh, spec, cyclic_1d, what)
    cfg = _call.Config(mesh, pl, tuple(spec), T_A, bool(return_status), bool(cyclic_1d), provider)
    return _program.run(_syevd_program, (a,), mesh, cfg=cfg, vectors=bool(return_eigenvectors))


def _syevd_program(a, *, cfg, vectors):
    w, v, status = _eigh_rules.syevd(cfg, vectors, a)
    v = None if v is None else _mesh_types.follow(v, a, cfg.mesh)
    out = (w, v) if vectors else (w,)
    if cfg.return_status:
        return out + (status,)
    return out if vectors else w

