"""How results are typed on meshes with Explicit axes (jax.make_mesh's
default since jax 0.10), so that the code around a call works as it does
around the jnp function it stands for.

Under Explicit axes an array's sharding is part of its type (f64[8,8@x]).
jnp.linalg.inv(numpy array) is an unsharded f64[8,8]: sliced, symmetrized
(A + A^T), differentiated like any array.  A result typed f64[8,8@x] is
refused by all of these (ShardingTypeError), and an eager jax.grad outside
`jax.set_mesh` of any value typed on an Explicit mesh fails in JAX itself
("Length of device assignment 1 is not equal to the size of the mesh 4").
Two rules, one per situation:

* outside any `jax.set_mesh` (and with no input already typed on a mesh
  with Explicit axes) a call runs on the mesh's Auto twin (same devices,
  names and order; Auto axes): its results are typed as on an Auto mesh,
  unsharded, wherever their data lies.  Nothing moves;
* inside `jax.set_mesh`, or for inputs typed on the mesh, a matrix result
  follows its input: an unsharded input gives a replicated, unsharded
  result (jnp's type: inv, eigh's vectors), a sharded one keeps the
  documented sharding (jnp refuses sharded inputs there).
"""
import functools

import jax
from jax.sharding import AxisType, Mesh, PartitionSpec as P

from . import _sharding
from ._sharding import explicit_axes


def _spec_axes(x) -> set:
    """The mesh axes x's type is sharded over (none for numpy, Python
    values, arrays of one device or of Auto axes)."""
    try:
        spec = jax.typeof(x).sharding.spec
    except (AttributeError, TypeError):
        return set()
    return {ax for part in spec if part is not None
            for ax in (part if isinstance(part, (tuple, list)) else (part,))}


def typed_sharded(x, mesh: Mesh) -> bool:
    """Whether x's type is sharded over one of mesh's Explicit axes."""
    return bool(_spec_axes(x) & explicit_axes(mesh))


def _typed_on_explicit(x) -> bool:
    """Whether x's type names a mesh with Explicit axes (sharded over them
    or not: a replicated result of a call under `jax.set_mesh` is), which
    a program on another mesh refuses ("Mesh for all inputs should be
    equal")."""
    try:
        return bool(explicit_axes(jax.typeof(x).sharding.mesh))
    except (AttributeError, TypeError):
        return False


@functools.cache
def auto_twin(mesh: Mesh) -> Mesh:
    """mesh with every axis Auto (cached: one program per mesh)."""
    return Mesh(mesh.devices, mesh.axis_names, axis_types=(AxisType.Auto,) * len(mesh.axis_names))


def _in_context() -> bool:
    """Whether a `jax.set_mesh` (or an enclosing call's) mesh is in force."""
    am = jax.sharding.get_abstract_mesh()
    return not getattr(am, "empty", True)


def for_call(mesh: Mesh, *xs) -> Mesh:
    """The mesh a call on `mesh` runs on: mesh itself inside a mesh
    context, for inputs typed on a mesh with Explicit axes, or when it has
    none; else its Auto twin (module docstring)."""
    if not explicit_axes(mesh) or _in_context() or any(_typed_on_explicit(x) for x in xs):
        return mesh
    return auto_twin(mesh)


def follow(x: jax.Array, a, mesh: Mesh) -> jax.Array:
    """A matrix result x typed like the input a: replicated (unsharded)
    when a's type is not sharded over mesh's Explicit axes, as it is.

    Call inside the program (a traced), outside the derivative rules, so
    that tangents and cotangents are retyped with x (reshard's rules)."""
    if not explicit_axes(mesh) or typed_sharded(a, mesh) or not _spec_axes(x):
        return x
    return _sharding.constrain(x, mesh, P(*(None,) * x.ndim))


def pin_tangent(da: jax.Array, mesh: Mesh) -> jax.Array:
    """da, resharded to its own type: a no-op forward, whose transpose
    retypes the cotangent reaching A like A (the products of the reverse
    rules leave it row-sharded, f64[8@x,8], for an unsharded A; jnp's
    gradient of an unsharded input is unsharded)."""
    if not explicit_axes(mesh) or type(da).__name__ == "Zero":
        return da
    return jax.sharding.reshard(da, jax.typeof(da).sharding.spec)
