"""The 1-D column block-cyclic layout in JAX: turning a matrix into the
cyclic form the solves take with cyclic_1d=True, and back.

Which global column each cyclic column holds comes from the runtime
(_layout.cyclic_index).  These are utilities, not the solve path: the
solves relayout inside the runtime.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from . import _layout, _sharding


def cyclic_1d_layout(a: jax.Array, T_A: int, mesh: Mesh | None = None,
                     axis_name: str | None = None) -> jax.Array:
    """A in its 1-D column block-cyclic form with tile T_A.

    Args:
      a: A (N x N), any sharding.
      T_A: the tile.
      mesh: the mesh (None: a's own when a is a sharded jax.Array, as
        jaxmg reads it off A; else the one of `with jax.set_mesh(...)`).
      axis_name: the mesh axis to spread the columns over (None: the one
        axis a is sharded over, else the mesh's first).

    Returns:
      An N x (ndev*LC) array sharded P(None, axis) whose shard r is rank r's
      cyclic buffer (LC = local_cols(N, T_A, ndev); padding columns zero).

    Raises:
      ValueError: no mesh: none given, a not sharded, no context mesh.
    """
    mesh, axis = mesh_and_axis(a, mesh, axis_name, "cyclic_1d_layout")
    R = int(mesh.shape[axis])
    idx = _layout.cyclic_index(a.shape[0], T_A, R)
    with _sharding.in_mesh(mesh, _sharding.is_traced(a)):
        return _gather_cols(a, idx=tuple(int(i) for i in idx), mesh=mesh, axis=axis, shard=True)


def cyclic_1d_to_block(a_cyc: jax.Array, N: int, T_A: int, mesh: Mesh | None = None,
                       axis_name: str | None = None) -> jax.Array:
    """The inverse of cyclic_1d_layout.

    Args:
      a_cyc: the cyclic form, N x (ndev*LC).
      N: order of the matrix.
      T_A: the tile it was laid out with.
      mesh: the mesh (None: a_cyc's own, else the one of
        `with jax.set_mesh(...)`).
      axis_name: the mesh axis its columns are spread over (None: the one
        axis a_cyc is sharded over, else the mesh's first).

    Returns:
      A (N x N), sharded P(None, axis) when N divides evenly over the
      devices, else replicated.
    """
    mesh, axis = mesh_and_axis(a_cyc, mesh, axis_name, "cyclic_1d_to_block")
    R = int(mesh.shape[axis])
    idx = _layout.cyclic_index(N, T_A, R)
    pos = np.empty(N, dtype=np.int64)
    pos[idx[idx >= 0]] = np.nonzero(idx >= 0)[0]
    with _sharding.in_mesh(mesh, _sharding.is_traced(a_cyc)):
        return _gather_cols(a_cyc, idx=tuple(int(i) for i in pos), mesh=mesh, axis=axis,
                            shard=_layout.block_padded_order(N, R) == N)


def mesh_and_axis(a, mesh: Mesh | None, axis_name: str | None, what: str) -> tuple[Mesh, str]:
    """The mesh and axis to lay a out over: as given, else read off a's
    sharding (a concrete, sharded jax.Array), else the context mesh.

    Raises:
      ValueError: no mesh to be found; the message names mesh=.
    """
    sh = getattr(a, "sharding", None) if not _sharding.is_traced(a) else None
    own = sh if isinstance(sh, NamedSharding) and isinstance(sh.mesh, Mesh) else None
    if mesh is None and own is not None:
        mesh = own.mesh
    if mesh is None:
        try:
            mesh = _sharding.mesh_or_context(None)
        except ValueError:
            raise ValueError(f"{what}: pass mesh= (A is not a sharded jax.Array and no "
                             "`with jax.set_mesh(mesh)` is active)") from None
    if axis_name is None and own is not None and own.mesh == mesh:
        named = [p for p in own.spec if p is not None]
        if len(named) == 1 and isinstance(named[0], str):
            axis_name = named[0]
    return mesh, axis_name or mesh.axis_names[0]


@partial(jax.jit, static_argnames=("idx", "mesh", "axis", "shard"))
def _gather_cols(a, *, idx, mesh, axis, shard):
    """Columns idx of a (-1: a zero column), gathered from a replicated copy
    (simple, and unambiguous for jax's sharding rules)."""
    idx = np.asarray(idx)
    a = _sharding.constrain(a, mesh, P(None, None))
    cols = jnp.asarray(np.where(idx >= 0, idx, 0))
    out = jnp.where(jnp.asarray(idx >= 0)[None, :], jnp.take(a, cols, axis=1), jnp.zeros((), a.dtype))
    return _sharding.constrain(out, mesh, P(None, axis) if shard else P(None, None))
