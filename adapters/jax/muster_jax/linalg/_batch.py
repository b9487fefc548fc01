"""Leading batch dimensions, as jnp.linalg takes them: a (..., N, N) is a
batch of matrices, solved one after another (jax.vmap of the 2-D call:
the handler's batching rule loops over the matrices, docs/jax.md
"Batching").  The whole batch is one XLA program, eager or traced.
"""
import jax
import numpy as np
from jax.sharding import Mesh

from .. import _program


def lead(a, b, what: str) -> tuple:
    """The batch dimensions of a, checked against b's.

    Args:
      a: (..., N, N).
      b: None, or (..., N) (a vector per matrix: b.ndim == a.ndim - 1) or
        (..., N, K), with a's leading dimensions.

    Raises:
      ValueError: b's leading dimensions differ (jnp would broadcast them;
        muster does not: broadcast b first).
    """
    dims = tuple(np.shape(a)[:-2])
    if b is not None:
        bl = tuple(np.shape(b)[:len(dims)])
        if bl != dims or np.ndim(b) not in (len(dims) + 1, len(dims) + 2):
            raise ValueError(f"{what}: a has batch dimensions {dims}, so b must be {dims + ('N',)} or "
                             f"{dims + ('N', 'K')}, got shape {np.shape(b)}; broadcast b to a's batch first "
                             "(jnp.broadcast_to)")
    return dims


def run(fn, arrays: tuple, mesh: Mesh, /, **kw):
    """fn (a public linalg function of 2-D inputs) over the batch
    dimensions of arrays[0], as one program; kw: fn's other arguments
    (hashable), mesh included."""
    return _program.run(_batched, arrays, mesh, fn=fn, kw=tuple(sorted(kw.items())))


def _batched(a, *rest, fn, kw):
    dims = a.shape[:-2]
    flat = [x.reshape((-1,) + x.shape[len(dims):]) for x in (a, *rest)]
    out = jax.vmap(lambda *xs: fn(*xs, **dict(kw)))(*flat)
    return jax.tree.map(lambda o: o.reshape(dims + o.shape[1:]), out)
