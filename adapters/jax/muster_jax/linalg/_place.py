"""Where a linalg function solves, and the matrix it hands muster: the mesh
and PartitionSpec read off the input (else the enclosing `jax.set_mesh`,
else every device of the default backend), the dtype promoted as jnp
promotes it, and the Hermitian matrix of one triangle.
"""
import functools

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from .. import _algebra, _args, _mesh_types, _sharding


@functools.cache
def default_mesh() -> Mesh:
    """A 1-D mesh over every device of the default backend, axis "x"
    (Auto: the inputs need not be placed on it)."""
    devs = jax.devices()
    return jax.make_mesh((len(devs),), ("x",), axis_types=(jax.sharding.AxisType.Auto,), devices=devs)


def _one_dim(spec, mesh: Mesh) -> P | None:
    """spec when it shards exactly one of two dimensions over axes of mesh."""
    parts = tuple(spec) + (None,) * (2 - len(tuple(spec)))
    named = [p for p in parts if p is not None]
    if len(parts) != 2 or len(named) != 1:
        return None
    axes = named[0] if isinstance(named[0], (tuple, list)) else (named[0],)
    return P(*parts) if all(ax in mesh.shape for ax in axes) else None


def where(a, mesh: Mesh | None, what: str) -> tuple[Mesh, P]:
    """(mesh, spec of a) for a linalg call.

    mesh: the one given; else a's own (a concrete array sharded over
    several devices); else the enclosing `with jax.set_mesh(...)`; else
    default_mesh(); the Auto twin of any of these outside a mesh context
    (_mesh_types.for_call).  spec: a's own when it shards one dimension over that
    mesh, else columns over the mesh's first axis.
    """
    sh = None if isinstance(a, jax.core.Tracer) else getattr(a, "sharding", None)
    named = isinstance(sh, NamedSharding) and isinstance(sh.mesh, Mesh) and len(sh.device_set) > 1
    if mesh is None:
        if named:
            mesh = sh.mesh
        else:
            try:
                mesh = _sharding.mesh_or_context(None)
            except ValueError:
                mesh = default_mesh()
    spec = None
    if named:
        spec = _one_dim(sh.spec, mesh)
    elif isinstance(a, jax.core.Tracer):
        tsh = getattr(jax.typeof(a), "sharding", None)
        spec = _one_dim(tsh.spec, mesh) if tsh is not None and hasattr(tsh, "spec") else None
    _args.on_mesh(a, "a", mesh, what)
    return _mesh_types.for_call(mesh, a), spec if spec is not None else P(None, mesh.axis_names[0])


def matrix(a, what: str, square: bool = True):
    """a as a 2-D array (array-likes converted), checked.

    Raises:
      TypeError: not array-like; ValueError: not 2-D, not square (when
        square), or empty.
    """
    a = _args.array(a, "a", what)
    if a.ndim != 2:
        raise ValueError(f"{what}: a must be 2-D, got shape {a.shape} (for a batch of matrices, "
                         f"jax.vmap the call)")
    if square and a.shape[0] != a.shape[1]:
        raise ValueError(f"{what}: a must be square, got shape {a.shape}")
    _args.nonempty(a, "a", what)
    return a


def rhs(b, rows: int, what: str):
    """b as a (rows,) or (rows, k) array.

    Raises:
      TypeError, ValueError: not array-like, or its shape.
    """
    b = _args.array(b, "b", what)
    if b.ndim not in (1, 2) or b.shape[0] != rows:
        raise ValueError(f"{what}: b must be ({rows},) or ({rows}, k) for a with {rows} rows, got shape "
                         f"{b.shape}")
    return b


def inexact(what: str, *xs):
    """The dtype the call solves in: jnp's promotion of the inputs, integers
    and bools to the default float (as jnp.linalg does).

    Raises:
      TypeError: a dtype muster does not take (float16, bfloat16).
    """
    dt = jnp.result_type(*xs)
    if not jnp.issubdtype(dt, jnp.inexact):
        dt = jnp.result_type(float)
    if dt not in _sharding.DTYPES:
        raise TypeError(f"{what}: dtype {dt} is not one muster solves in (float32, float64, complex64, "
                        f"complex128): pass a.astype(jnp.float32)")
    return jnp.dtype(dt)


def uplo(value, what: str, name: str = "UPLO") -> bool:
    """True for the lower triangle ("L"), False for the upper ("U").

    Raises:
      ValueError: anything else.
    """
    if value in ("L", "U"):
        return value == "L"
    raise ValueError(f"{what}: {name} must be 'L' or 'U', got {value!r}")


def even(spec: P, mesh: Mesh, n: int) -> P:
    """spec for an n x n intermediate when its sharded dimension divides
    evenly over the devices, else replicated (Explicit mesh axes refuse an
    uneven sharding; the routines pad A before sharding it)."""
    R = _sharding.axis_size(mesh, sharded_axis(spec))
    return spec if n % R == 0 else P(None, None)


def from_triangle(a: jax.Array, mesh: Mesh, spec: P, lower: bool) -> jax.Array:
    """The Hermitian matrix of a's lower (or upper) triangle, placed like a:
    what jax.scipy's Cholesky routines read (the other triangle ignored).
    Its tangent is Hermitian too, so muster's rules, which take herm(dA),
    give this function's exact derivative."""
    spec = even(spec, mesh, a.shape[0])
    tri = jnp.tril(a) if lower else jnp.triu(a)
    strict = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    return _sharding.constrain(tri, mesh, spec) + _sharding.constrain(_algebra.adjoint(strict), mesh, spec)


def hermitian_part(a: jax.Array, mesh: Mesh, spec: P) -> jax.Array:
    """(a + a^H) / 2, placed like a (jnp.linalg.eigh's symmetrize_input)."""
    return _algebra.herm(a, mesh, even(spec, mesh, a.shape[0]))


def sharded_axis(spec: P):
    """The mesh axis (or axes) of spec's sharded dimension."""
    return _sharding.axis_of(spec, "muster_jax.linalg")[1]


def assume(value, what: str, allowed=("gen", "sym", "her", "pos")) -> str:
    """assume_a, checked.

    Raises:
      ValueError: a value muster has no solver for.
    """
    if value not in allowed:
        raise ValueError(f"{what}: assume_a must be one of {', '.join(map(repr, allowed))} "
                         f"(muster has no other structured solver), got {value!r}")
    return value
