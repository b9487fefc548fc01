"""The per-device call of the muster_jax FFI handler, and what every
routine's wrapper shares (the jit cache, the launch).

Inside shard_map every device runs one instance of the handler with its own
column block of A; the instances meet in a muster group (one per launch and
call site) and the runtime runs the provider once, from the leader, with
every shard.  The handler's operands and attributes are listed at the top of
adapters/jax/ffi.c; docs/jax.md says how it works.
"""
import threading
from functools import partial
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from . import _groups, _lib, _sharding

POTRS, POTRI, SYEVD = (_lib.routine_code(r) for r in ("potrs", "potri", "syevd"))
NO_VECTORS = 0x1  # MUSTER_NO_VECTORS
NO_FACTOR = 0x2   # MUSTER_NO_FACTOR: potrs may leave A unspecified (we drop it)
_LAYOUT_BLOCK, _LAYOUT_CYCLIC = 0, 1  # muster_layout_t
_COLMAJOR = (1, 0)  # jax.ffi layouts are major-to-minor: (1, 0) is column-major


def local_solve(routine: int, a: jax.Array, b: jax.Array | None = None, *, axis_name: str, n: int,
                T_A: int | None = None, cyclic_1d: bool = False, flags: int = 0,
                provider: str | None = None, return_status: bool = False,
                process_mode: bool | None = None,
                site: int | None = None) -> tuple[jax.Array, jax.Array | None, jax.Array]:
    """One device's call of the handler, inside shard_map.

    Args:
      routine: POTRS, POTRI or SYEVD.
      a: this device's column block of A (ld x w; its cyclic buffer if
        cyclic_1d).
      b: all of B (ld x nrhs), potrs only.
      axis_name: the mesh axis A is sharded over.
      n: order of A (ld may be larger: padding rows).
      T_A: the tile (None: the runtime's choice; required with cyclic_1d).
      cyclic_1d: whether a is in the cyclic layout.
      flags: NO_VECTORS, NO_FACTOR.
      provider: force a provider (None: the runtime's choice).
      return_status: report failures in the status (outputs NaN) instead of
        raising.
      process_mode: whether the ranks are processes (None: jax has more
        than one process).
      site: the call site (None: a fresh one).

    Returns:
      (a_out, b_out or w or None, status int32[1]): potrs gives (A's
      remains, X, status), potri (its block of inv(A), None, status),
      syevd (its block of the eigenvectors, the eigenvalues, status).

    Raises:
      TypeError: a dtype muster does not take, or b's differs from a's.
    """
    if a.dtype not in _sharding.DTYPES:
        raise TypeError(f"muster_jax: dtype {a.dtype} not supported (float32, float64, complex64, complex128)")
    if process_mode is None:
        process_mode = jax.process_count() > 1
    nranks = int(jax.sharding.get_abstract_mesh().shape[axis_name])
    ins = [_groups.rank_operand(axis_name), a]
    outs = [jax.ShapeDtypeStruct(a.shape, a.dtype)]
    in_layouts, out_layouts, aliases = [None, _COLMAJOR], [_COLMAJOR], {1: 0}
    if routine == POTRS:
        if b.dtype != a.dtype:
            raise TypeError(f"muster_jax: b has dtype {b.dtype}, A has {a.dtype}")
        ins.append(b)
        in_layouts.append(_COLMAJOR)
        outs.append(jax.ShapeDtypeStruct(b.shape, b.dtype))
        out_layouts.append(_COLMAJOR)
        aliases[2] = 1
    elif routine == SYEVD:
        outs.append(jax.ShapeDtypeStruct((a.shape[0],), jnp.finfo(a.dtype).dtype))  # real eigenvalues
        out_layouts.append(None)
    outs.append(jax.ShapeDtypeStruct((1,), jnp.int32))
    out_layouts.append(None)
    call = jax.ffi.ffi_call(_lib.TARGET, outs, input_layouts=in_layouts, output_layouts=out_layouts,
                            input_output_aliases=aliases, has_side_effect=False)
    res = call(*ins, routine=np.int32(routine), n=np.int64(n),
               nrhs=np.int64(b.shape[1] if routine == POTRS else 0), tile=np.int64(T_A or 0),
               layout=np.int32(_LAYOUT_CYCLIC if cyclic_1d else _LAYOUT_BLOCK), flags=np.int32(flags),
               nranks=np.int32(nranks), provider=str(provider or ""), group_key=_groups.group_key(),
               site=np.int64(_groups.next_trace_site() if site is None else site),
               return_status=np.int32(bool(return_status)), process_mode=np.int32(bool(process_mode)),
               # every rank in this process: the handler may reuse group names
               local_ranks=np.int32(1 if process_mode else nranks))
    if routine == POTRI:
        return res[0], None, res[1]
    return res[0], res[1], res[2]


_jitted = {}
_jitted_lock = threading.Lock()


def _compiled(impl: Callable, **static) -> Callable:
    """jax.jit of impl with its static configuration bound, one per
    configuration: calls with arrays only take jax's C++ dispatch path."""
    key = (impl.__name__,) + tuple(sorted(static.items()))
    fn = _jitted.get(key)
    if fn is None:
        with _jitted_lock:
            fn = _jitted.setdefault(key, jax.jit(partial(impl, **static)))
    return fn


def launch(impl: Callable, arrays: tuple, mesh: Mesh, config: tuple, **static) -> tuple:
    """Run a routine's implementation on the caller's arrays.

    Args:
      impl: the implementation, impl(*arrays, mesh=, site=, **static).
      arrays: the jax arrays it takes.
      mesh: the mesh.
      config: what makes the call's program (for its site: _groups.site_for).
      **static: impl's other static arguments.

    Returns:
      What impl returns: compiled once per configuration for eager calls,
      traced into the caller's program inside a trace.
    """
    traced = _sharding.is_traced(*arrays)
    fn = _compiled(impl, mesh=mesh, site=_groups.site_for(config, traced), **static)
    with _sharding.in_mesh(mesh, traced):
        return fn(*arrays)
