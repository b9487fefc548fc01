"""What names a solve's muster group, from the Python side.

The handler names the group of a launch "jx.<key>.<routine>.<site>.<replica>"
plus a pooled suffix or XLA's run id (adapters/jax/group_name.c).  This
module supplies the parts only Python knows: the group key shared by the
processes of a job, the call site, and each device's (rank, replica).
"""
import hashlib
import itertools
import os
import zlib

import jax
import jax.numpy as jnp

# Sites of calls inside a user's trace; eager sites (site_for) live in
# [2^30, 2^31), so the two never meet while this stays below 2^30.
_trace_sites = itertools.count(1)


def next_trace_site() -> int:
    """A site no other solve of this process has used."""
    return next(_trace_sites)


def site_for(config: tuple, traced: bool) -> int:
    """The call site of a solve: two solves of one program never share a group.

    Args:
      config: everything that makes the call's program (shapes, dtypes,
        mesh, options); hashed for eager calls.
      traced: whether the call is inside the caller's trace.

    Returns:
      A fresh site per call inside a user trace; for eager calls a stable
      one per configuration, so the jitted implementation is compiled once.
    """
    if traced:
        return next_trace_site()
    return (zlib.crc32(repr(config).encode()) & 0x3FFFFFFF) | 0x40000000


def group_key() -> str:
    """The key that keeps one job's groups apart from another's.

    Returns:
      "" in one process (the handler then uses its pid); else
      $MUSTER_JAX_GROUP_KEY (40 characters at most) or a key every process
      of this jax.distributed job computes alike from its coordinator.
    """
    if jax.process_count() == 1:
        return ""
    if os.environ.get("MUSTER_JAX_GROUP_KEY"):
        return os.environ["MUSTER_JAX_GROUP_KEY"][:40]
    try:
        from jax._src import distributed
        addr = str(distributed.global_state.coordinator_address)
    except Exception:
        addr = "?"
    h = hashlib.sha1(f"{addr}|{jax.process_count()}".encode()).hexdigest()[:12]
    return "j" + h


def axis_size(axis_name: str | tuple) -> int:
    """Devices along a mesh axis, or along a tuple of them (their product),
    in the current shard_map."""
    shape = jax.sharding.get_abstract_mesh().shape
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    size = 1
    for ax in names:
        size *= int(shape[ax])
    return size


def rank_operand(axis_name: str | tuple) -> jax.Array:
    """This device's place in its group, inside shard_map.

    Args:
      axis_name: the mesh axis (or tuple of axes) the matrix is sharded
        over.

    Returns:
      int32[2]: the rank along axis_name, and the replica index over the
      other manual mesh axes (each replica solves on its own).
    """
    rank = jax.lax.axis_index(axis_name)
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    replica = jnp.int32(0)
    am = jax.sharding.get_abstract_mesh()
    manual = set(getattr(am, "manual_axes", ()) or ())
    for ax in am.axis_names:
        if ax not in names and ax in manual:
            replica = replica * am.shape[ax] + jax.lax.axis_index(ax)
    return jnp.stack([rank, replica]).astype(jnp.int32)
