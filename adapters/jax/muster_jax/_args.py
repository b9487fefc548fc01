"""Checks of the caller's arguments, made in Python before anything is
traced or runs: every mistake is a ValueError or TypeError that names the
argument and says what to pass instead (docs/errors.md, "JAX").
"""
import numbers

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from . import _sharding


def array(x, name: str, what: str):
    """x as an array the routines take.

    Args:
      x: a jax array or tracer, a numpy array, or an array-like (nested
        lists or tuples of numbers, a scalar), converted as jnp.asarray
        converts it.
      name: the argument's name, for messages.
      what: the caller's name, for messages.

    Returns:
      x itself (arrays, tracers), or jnp.asarray(x).

    Raises:
      TypeError: x is not array-like (a string, a dict, a ragged list...).
    """
    if isinstance(x, (jax.Array, np.ndarray, jax.core.Tracer)) or hasattr(x, "__jax_array__"):
        return x
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{what}: {name} must be an array (jax or numpy), got {type(x).__name__}")
    try:
        return jnp.asarray(np.asarray(x))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: {name} must be an array or an array-like (nested lists of numbers), "
                        f"got {type(x).__name__}: {e}") from None


def tile(T_A, what: str, name: str = "T_A") -> int | None:
    """The tile as an int (None stays None).

    Raises:
      TypeError: anything but None or an integer (2.0, "2", True).
    """
    if T_A is None:
        return None
    if isinstance(T_A, bool) or not isinstance(T_A, numbers.Integral):
        raise TypeError(f"{what}: {name} must be an int or None (the runtime's choice), got "
                        f"{T_A!r} ({type(T_A).__name__}); pass e.g. {name}={_as_int_hint(T_A)}")
    if int(T_A) < 1:
        raise ValueError(f"{what}: {name} must be >= 1 or None (the runtime's choice), got {T_A}")
    return int(T_A)


def _as_int_hint(v) -> str:
    try:
        return str(max(1, int(v)))
    except (TypeError, ValueError):
        return "None"


def provider(p, what: str) -> str | None:
    """The provider's name, or None.

    Raises:
      TypeError: anything but a string or None.
    """
    if p is None or (isinstance(p, str) and p == ""):
        return None
    if not isinstance(p, str):
        raise TypeError(f"{what}: provider must be a provider's name (a str such as 'lapack') or None, "
                        f"got {p!r}")
    return p


def nonempty(a, name: str, what: str) -> None:
    """A matrix with no rows or columns has nothing to solve.

    Raises:
      ValueError: a has a zero dimension.
    """
    if any(int(d) == 0 for d in np.shape(a)):
        raise ValueError(f"{what}: {name} has shape {tuple(np.shape(a))}: muster needs N >= 1 "
                         "(a 0 x 0 matrix has nothing to solve; skip the call for empty inputs)")


def _device_ids(sharding) -> list[int] | None:
    """Devices of a sharding in its mesh's order, or None when it has no
    such order (one device, a non-named sharding)."""
    mesh = getattr(sharding, "mesh", None)
    if not isinstance(mesh, Mesh):
        return None
    return [d.id for d in mesh.devices.flat]


def on_mesh(x, name: str, mesh: Mesh, what: str) -> None:
    """A concrete array placed over several devices must be on the mesh's
    devices in the mesh's order (jit refuses anything else, naming an
    internal function).

    Raises:
      ValueError: x's devices, or their order, differ from the mesh's.
    """
    if not isinstance(x, jax.Array) or isinstance(x, jax.core.Tracer):
        return
    sh = getattr(x, "sharding", None)
    if sh is None or len(sh.device_set) <= 1:
        return
    have, want = _device_ids(sh), [d.id for d in mesh.devices.flat]
    if have is None:
        if {d.id for d in sh.device_set} <= set(want):
            return
        have = sorted(d.id for d in sh.device_set)
    if have == want:
        return
    if sorted(have) == sorted(want):
        problem = f"its mesh orders them {have}, mesh= orders them {want}"
    else:
        problem = f"it is on devices {have}, mesh= has {want}"
    raise ValueError(f"{what}: {name} is not placed on mesh=: {problem}. Pass mesh={name}.sharding.mesh, "
                     f"or move it first: jax.device_put({name}, NamedSharding(mesh, spec))")


def manual_axis(axis_name, what: str) -> None:
    """The *_shardmap_ctx functions run inside jax.shard_map, over a mesh
    axis of it.

    Raises:
      ValueError: not inside shard_map, or axis_name is not one of its
        manual axes (the message lists them).
    """
    am = jax.sharding.get_abstract_mesh()
    manual = tuple(ax for ax in am.axis_names if ax in set(getattr(am, "manual_axes", ()) or ()))
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not manual:
        raise ValueError(f"{what} runs inside the body of jax.shard_map (no mesh axis is manual here); "
                         f"call it from a shard_map body over axis {axis_name!r}, or outside one use "
                         f"{what.replace('_shardmap_ctx', '').replace('_no_shardmap', '')}(..., mesh=mesh)")
    missing = [ax for ax in names if ax not in manual]
    if missing:
        hint = manual[0] if len(manual) == 1 else manual
        raise ValueError(f"{what}: axis_name={axis_name!r} is not a mesh axis of the enclosing shard_map "
                         f"(its axes: {manual}); pass axis_name={hint!r}")


def dtype(a, name: str, what: str) -> None:
    """Raises TypeError for a dtype muster does not take."""
    if a.dtype not in _sharding.DTYPES:
        raise TypeError(f"{what}: {name} has dtype {a.dtype}, not supported; muster takes float32, float64, "
                        f"complex64, complex128: pass {name}.astype(jnp.float64) (or float32)")
