"""One XLA program per call of a public function.

JAX dispatches eagerly op by op: a solve's failure is an error in its
result buffer, and every later op that reads it (the slice that turns a
2-D X into the 1-D x of a 1-D b, the products of the linalg functions)
wraps it again: "INTERNAL: Error dispatching computation: Error
dispatching computation: ...", its kind lost.  So the whole of a public
function, its checks' reshapes and its solves, is one jitted program: the
failed solve's own error (INVALID_ARGUMENT for a numerical failure,
docs/errors.md) is what the caller sees, eager or not.
"""
import threading
from functools import partial
from typing import Callable

import jax
from jax.sharding import Mesh

from . import _sharding

_cache = {}
_lock = threading.Lock()


def run(fn: Callable, arrays: tuple, mesh: Mesh, /, **static):
    """fn(*arrays, **static) as one program.

    Args:
      fn: the function's body; static: its hashable configuration.
      arrays: its array arguments.
      mesh: the mesh (entered for eager calls: Explicit axes want it).

    Returns:
      What fn returns.  Eagerly, a jit compiled once per (fn, static);
      inside a trace (jit, vmap, grad), a fresh jit traced into the
      caller's program (never a cached trace: two calls of one program
      must not share their solves' call sites, hence their groups).
    """
    if _sharding.is_traced(*arrays):
        return jax.jit(partial(fn, **static))(*arrays)
    key = (fn, tuple(sorted(static.items(), key=lambda kv: kv[0])))
    jf = _cache.get(key)
    if jf is None:
        with _lock:
            jf = _cache.setdefault(key, jax.jit(partial(fn, **static)))
    with jax.set_mesh(mesh):
        return jf(*arrays)
