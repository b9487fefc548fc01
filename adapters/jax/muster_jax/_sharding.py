"""Meshes and PartitionSpecs: reading what the caller gave, checking A
against it, and placing A (padded, sharded) the way the solves' shard_map
takes it.  How many columns each device holds comes from _layout (the
runtime's rules).
"""
import contextlib
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from . import _layout

DTYPES = (jnp.float32, jnp.float64, jnp.complex64, jnp.complex128)


def mesh_or_context(mesh: Mesh | None) -> Mesh:
    """The mesh to solve on.

    Args:
      mesh: the caller's mesh, or None.

    Returns:
      mesh, or else the mesh of the enclosing `with jax.set_mesh(...)`.

    Raises:
      ValueError: neither is there.
    """
    if mesh is not None:
        return mesh
    try:
        from jax._src import mesh as mesh_lib
        m = mesh_lib.get_concrete_mesh()
        if m is not None and not getattr(m, "empty", False) and m.shape:
            return m
    except Exception:
        pass
    raise ValueError("muster_jax: pass mesh= (or call inside `with jax.set_mesh(mesh)`)")


def _two_parts(spec: P) -> tuple:
    return tuple(spec) + (None,) * (2 - len(tuple(spec)))


def axis_of(spec: P, what: str) -> tuple[int, str | tuple]:
    """Where A is sharded.

    Args:
      spec: A's PartitionSpec, P(None, 'x') (columns) or P('x', None)
        (rows); the dimension may be spread over several mesh axes at once,
        P(None, ('x', 'y')), devices in the mesh's order along them.
      what: the caller's name, for messages.

    Returns:
      (dim, axis): the sharded dimension of A and the mesh axis over it (a
      tuple of axes for several).

    Raises:
      ValueError: spec is not 2-D or shards both dimensions (jaxmg 1.4.x's
        two-axis P('x', 'y') is mapped to P(None, ('x', 'y')) by
        jaxmg.v1 before it comes here).
    """
    parts = _two_parts(spec)
    if len(parts) != 2:
        raise ValueError(f"{what}: expected a 2-D PartitionSpec, got {spec}")
    names = [(i, p) for i, p in enumerate(parts) if p is not None]
    if len(names) != 1:
        raise ValueError(f"{what}: A must be sharded along exactly one dimension, "
                         f"P(None, 'x') (columns) or P('x', None) (rows); got {spec}")
    dim, ax = names[0]
    if isinstance(ax, (tuple, list)):
        if len(set(ax)) != len(ax) or not ax:
            raise ValueError(f"{what}: a mesh axis named twice in {spec}")
        ax = ax[0] if len(ax) == 1 else tuple(ax)
    return dim, ax


def axis_size(mesh: Mesh, axis: str | tuple, what: str = "muster_jax") -> int:
    """Devices along a mesh axis, or along a tuple of them (their product).

    Raises:
      ValueError: the mesh has no such axis.
    """
    names = axis if isinstance(axis, tuple) else (axis,)
    for ax in names:
        if ax not in mesh.shape:
            raise ValueError(f"{what}: mesh has no axis {ax!r} (axes {tuple(mesh.shape)})")
    R = 1
    for ax in names:
        R *= int(mesh.shape[ax])
    return R


def check_b_spec(spec: P, axis: str, what: str) -> None:
    """Check b's PartitionSpec: replicated, or rows over A's axis.

    Args:
      spec: b's PartitionSpec.
      axis: the mesh axis A is sharded over.
      what: the caller's name, for messages.

    Raises:
      ValueError: any other spec.
    """
    parts = _two_parts(spec)
    row = tuple(parts[0]) if isinstance(parts[0], list) else parts[0]
    if len(parts) != 2 or parts[1] is not None or row not in (None, axis, (axis,)):
        raise ValueError(f"{what}: b must be replicated P(None, None) or row-sharded "
                         f"P('{axis}', None); got {spec}")


def single_spec(in_specs: P | tuple | list | None, mesh: Mesh) -> P:
    """The spec of a routine that takes A alone.

    Args:
      in_specs: A's PartitionSpec, a 1-tuple of it, or None.
      mesh: the mesh; None means columns over its first axis.

    Returns:
      A's PartitionSpec.

    Raises:
      ValueError: in_specs is anything else.
    """
    if in_specs is None:
        return P(None, mesh.axis_names[0])
    if isinstance(in_specs, P):
        return in_specs
    if isinstance(in_specs, (tuple, list)) and len(in_specs) == 1 and isinstance(in_specs[0], P):
        return in_specs[0]
    raise ValueError(f"in_specs must be the PartitionSpec of a (or a 1-tuple of it), got {in_specs}")


def explicit_axes(mesh) -> set:
    """The names of mesh's Explicit axes (a concrete or abstract mesh)."""
    types = getattr(mesh, "axis_types", None) or ()
    return {ax for ax, t in zip(mesh.axis_names, types) if "Explicit" in str(t)}


def constrain(x: jax.Array, mesh: Mesh, spec: P) -> jax.Array:
    """Put x in `spec`: reshard over Explicit mesh axes, a sharding
    constraint over Auto ones (jax refuses the other pairings).

    Args:
      x: the array.
      mesh: the mesh.
      spec: where x should be.

    Returns:
      x, sharded as spec says.
    """
    used = {p for part in spec if part is not None
            for p in (part if isinstance(part, (tuple, list)) else (part,))}
    explicit = explicit_axes(mesh)
    if explicit and used <= explicit:
        return jax.sharding.reshard(x, NamedSharding(mesh, spec))
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))


def is_traced(*xs: object) -> bool:
    """Whether the call is inside a trace: any of xs is a tracer, or a
    transformation is under way (a derivative rule's stop_gradient'ed
    values are concrete, yet jax.set_mesh is refused there)."""
    if any(isinstance(x, jax.core.Tracer) for x in xs):
        return True
    try:
        from jax._src import core
        return not core.trace_state_clean()
    except (ImportError, AttributeError):
        return False


def in_mesh(mesh: Mesh, traced: bool) -> contextlib.AbstractContextManager:
    """Eager calls enter the mesh (jax wants it for Explicit axes); traced
    ones run in the caller's context.

    Args:
      mesh: the mesh.
      traced: whether the call is inside the caller's trace.

    Returns:
      A context manager to run the call in.
    """
    if traced:
        return contextlib.nullcontext()
    return jax.set_mesh(mesh)


def spans_processes(mesh: Mesh) -> bool:
    """Whether the mesh's devices belong to more than one process (the
    handler's process mode)."""
    return len({d.process_index for d in mesh.devices.flat}) > 1


class Placement(NamedTuple):
    """Where A is along the mesh (what prepare found)."""
    dim: int    # the sharded dimension of A: 1 columns, 0 rows
    axis: str | tuple  # the mesh axis over it (a tuple: several at once)
    R: int      # devices along that axis
    N: int      # order of A


def _where(a: jax.Array, mesh: Mesh, a_spec: P, what: str) -> tuple[int, str | tuple, int]:
    """(dim, axis, devices along it) of a 2-D A of a dtype muster takes.

    Raises:
      ValueError, TypeError: A is not 2-D, its dtype, or the spec.
    """
    if a.ndim != 2:
        raise ValueError(f"{what}: a must be 2-D, got shape {a.shape}")
    if a.dtype not in DTYPES:
        raise TypeError(f"{what}: dtype {a.dtype} not supported (float32, float64, complex64, complex128)")
    dim, axis = axis_of(a_spec, what)
    return dim, axis, axis_size(mesh, axis, what)


def prepare(a: jax.Array, T_A: int | None, mesh: Mesh, a_spec: P, cyclic_1d: bool,
            what: str) -> Placement:
    """Check A against its mesh and spec before anything is traced.

    Args:
      a: the matrix: N x N, or N x (R * local_cols) if cyclic_1d.
      T_A: the tile (needed with cyclic_1d; checked when given otherwise).
      mesh: the mesh.
      a_spec: A's PartitionSpec.
      cyclic_1d: whether a is already in the cyclic layout.
      what: the caller's name, for messages.

    Returns:
      Where A is (Placement).

    Raises:
      ValueError, TypeError: A, T_A or the spec does not fit.
    """
    dim, axis, R = _where(a, mesh, a_spec, what)
    N = a.shape[0]
    if cyclic_1d:
        if T_A is None:
            raise ValueError(f"{what}: cyclic_1d=True needs the tile T_A the input was laid out with")
        if dim != 1:
            raise ValueError(f"{what}: a cyclic input must be column-sharded P(None, '{axis}')")
        want = R * _layout.local_cols(N, T_A, R)
        if a.shape[1] != want:
            raise ValueError(f"{what}: a cyclic input for N={N}, T_A={T_A} on {R} devices has "
                             f"{want} columns, got {a.shape[1]} (use cyclic_1d_layout)")
    else:
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"{what}: a must be square, got shape {a.shape}")
        if T_A is not None:
            _layout.check_T_A(N, T_A, R)
    return Placement(dim, axis, R, N)


def prepare_general(a: jax.Array, T_A: int | None, mesh: Mesh, a_spec: P, tall: bool, what: str) -> Placement:
    """Check a general (not Hermitian) A against its mesh and spec: square
    for getrs, m x n with m >= n for gels.

    Args:
      a: the matrix.
      T_A: the tile (checked against A's columns when given).
      mesh: the mesh.
      a_spec: A's PartitionSpec (either dimension over one axis: a
        row-sharded A is moved to columns, place_general).
      tall: m >= n is allowed (gels); else A must be square.
      what: the caller's name, for messages.

    Returns:
      Where A is; N is A's columns.

    Raises:
      ValueError, TypeError: A, T_A or the spec does not fit.
    """
    dim, axis, R = _where(a, mesh, a_spec, what)
    m, n = a.shape
    if tall and m < n:
        raise ValueError(f"{what}: a must have at least as many rows as columns (M >= N), got {a.shape}")
    if not tall and m != n:
        raise ValueError(f"{what}: a must be square, got shape {a.shape}")
    if T_A is not None:
        _layout.check_T_A(n, T_A, R)
    return Placement(dim, axis, R, n)


def place_general(a: jax.Array, mesh: Mesh, pl: Placement) -> jax.Array:
    """A general A as the solves' shard_map takes it: its columns padded to
    the block layout's padded order (the rows stay: gels's m is A's rows)
    and sharded P(None, axis); a row-sharded A is resharded (only a
    Hermitian A's row block is its column block's adjoint)."""
    Np = _layout.block_padded_order(pl.N, pl.R)
    if Np != pl.N:
        a = jnp.pad(a, ((0, 0), (0, Np - pl.N)))
    return constrain(a, mesh, P(None, pl.axis))


def place_a(a: jax.Array, mesh: Mesh, pl: Placement, cyclic_1d: bool) -> tuple[jax.Array, P, int]:
    """A as the solves' shard_map takes it.

    Args:
      a: the matrix, as prepare checked it.
      mesh: the mesh.
      pl: where A is.
      cyclic_1d: whether a is already in the (padded) cyclic layout.

    Returns:
      (a, spec, Np): a padded to Np x Np (the block layout's padded order;
      a cyclic input is left as it is, Np = N) and sharded along pl.axis on
      dimension pl.dim; its spec.
    """
    Np = pl.N if cyclic_1d else _layout.block_padded_order(pl.N, pl.R)
    if Np != pl.N:
        a = jnp.pad(a, ((0, Np - pl.N), (0, Np - pl.N)))
    a_spec = P(None, pl.axis) if pl.dim == 1 else P(pl.axis, None)
    return constrain(a, mesh, a_spec), a_spec, Np


def to_colblock(a_loc: jax.Array, dim: int) -> jax.Array:
    """A device's column block of a Hermitian A.

    Args:
      a_loc: the device's block: columns (dim 1) or rows (dim 0).
      dim: the sharded dimension.

    Returns:
      The column block: a row block of a Hermitian matrix is the conjugate
      transpose of its column block.
    """
    if dim == 1:
        return a_loc
    return jnp.conj(a_loc).T if jnp.iscomplexobj(a_loc) else a_loc.T
