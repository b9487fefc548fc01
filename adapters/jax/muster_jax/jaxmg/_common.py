"""What both jaxmg generations' modules share: jaxmg's tile T_A as a hint,
and the mesh axis of the enclosing shard_map."""
import jax

from .. import _layout


def tile(T_A: int | None, N: int, ndev: int) -> int | None:
    """jaxmg pads any tile to fit; muster's tile must divide its layout.
    A tile muster accepts is used, any other is left to the runtime."""
    if T_A is None:
        return None
    try:
        _layout.check_T_A(N, T_A, ndev)
    except ValueError:
        return None
    return int(T_A)


def manual_axis(what: str) -> str:
    """The one mesh axis of the enclosing shard_map (jaxmg's *_shardmap_ctx
    take no axis name).

    Raises:
      ValueError: outside shard_map, or inside one over several axes.
    """
    am = jax.sharding.get_abstract_mesh()
    axes = [ax for ax in am.axis_names if ax in set(getattr(am, "manual_axes", ()) or ())]
    if len(axes) != 1:
        raise ValueError(f"{what}: call it inside a jax.shard_map over one mesh axis (found {axes})")
    return axes[0]
