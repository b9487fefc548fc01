"""The per-device call of the muster_jax FFI handler, and what every
routine's wrapper shares (the jit cache, the launch).

Inside shard_map every device runs one instance of the handler with its own
column block of A; the instances meet in a muster group (one per launch and
call site) and the runtime runs the provider once, from the leader, with
every shard.  The handler's operands and attributes are listed at the top of
adapters/jax/ffi.c; docs/jax-internals.md says how it works.
"""
import threading
from functools import partial
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from . import _groups, _layout, _lib, _sharding

POTRS, POTRI, SYEVD, GETRS, GELS = (_lib.routine_code(r) for r in ("potrs", "potri", "syevd", "getrs", "gels"))
GEQRF, GESVD, POLAR = (_lib.routine_code(r) for r in ("geqrf", "gesvd", "polar"))
SOLVES = (POTRS, GETRS, GELS)  # the routines with right-hand sides
FACTORS = (GEQRF, GESVD, POLAR)  # B an output only: the packed factors (docs/factorizations.md)
TAKES_B = SOLVES + FACTORS  # the handler's third operand
NO_VECTORS = 0x1  # MUSTER_NO_VECTORS
NO_FACTOR = 0x2   # MUSTER_NO_FACTOR: the routine may leave A unspecified (we drop it)
FULL_MATRICES = 0x8  # MUSTER_FULL_MATRICES: geqrf's complete Q, gesvd's full U and V^H
_LAYOUT_BLOCK, _LAYOUT_CYCLIC = 0, 1  # muster_layout_t
_COLMAJOR = (1, 0)  # jax.ffi layouts are major-to-minor: (1, 0) is column-major


def local_solve(routine: int, a: jax.Array, b: jax.Array | None = None, *, axis_name: str | tuple,
                n: int, T_A: int | None = None, cyclic_1d: bool = False, flags: int = 0,
                provider: str | None = None, return_status: bool = False,
                process_mode: bool | None = None,
                site: int | None = None) -> tuple[jax.Array, jax.Array | None, jax.Array]:
    """One device's call of the handler, inside shard_map.

    Under jax.vmap the call is batched by _batch_rule (one handler call per
    matrix, or one call with B's columns side by side when A is shared).

    Args:
      routine: POTRS, POTRI, SYEVD, GETRS, GELS, or one of FACTORS.
      a: this device's column block of A (ld x w; its cyclic buffer if
        cyclic_1d).
      b: all of B (ld x nrhs), the routines of TAKES_B only (gels: m x
        nrhs, ld = m the rows of A; FACTORS: m x b_cols, outputs only).
      axis_name: the mesh axis (or tuple of axes) A is sharded over.
      n: order of A (ld may be larger: padding rows); gels, FACTORS: A's
        columns.
      T_A: the tile (None: the runtime's choice; required with cyclic_1d).
      cyclic_1d: whether a is in the cyclic layout.
      flags: NO_VECTORS, NO_FACTOR, FULL_MATRICES.
      provider: force a provider (None: the runtime's choice).
      return_status: report failures in the status (outputs NaN) instead of
        raising.
      process_mode: whether the ranks are processes (None: jax has more
        than one process).
      site: the call site (None: a fresh one).

    Returns:
      (a_out, b_out or w or None, status int32[1]): potrs gives (A's
      remains: its Cholesky factor in the lower triangle unless NO_FACTOR,
      X, status), potri (its block of inv(A), None, status), syevd (its
      block of the eigenvectors, the eigenvalues, status); getrs and gels
      as potrs, A as it was (or unspecified with NO_FACTOR) and gels's X
      in the first n of its m rows; geqrf and polar (A's factor or A, B's
      packed factors, status), gesvd (A's factor or A, (B, the singular
      values), status).

    Raises:
      TypeError: a dtype muster does not take, or b's differs from a's.
    """
    if a.dtype not in _sharding.DTYPES:
        raise TypeError(f"muster_jax: dtype {a.dtype} not supported (float32, float64, complex64, complex128)")
    if routine in TAKES_B and b.dtype != a.dtype:
        raise TypeError(f"muster_jax: b has dtype {b.dtype}, A has {a.dtype}")
    if process_mode is None:
        process_mode = jax.process_count() > 1
    nranks = _groups.axis_size(axis_name)
    attrs = dict(routine=np.int32(routine), n=np.int64(n), tile=np.int64(T_A or 0),
                 layout=np.int32(_LAYOUT_CYCLIC if cyclic_1d else _LAYOUT_BLOCK), flags=np.int32(flags),
                 nranks=np.int32(nranks), provider=str(provider or ""), group_key=_groups.group_key(),
                 site=np.int64(_groups.next_trace_site() if site is None else site),
                 return_status=np.int32(bool(return_status)), process_mode=np.int32(bool(process_mode)),
                 # every rank in this process: the handler may reuse group names
                 local_ranks=np.int32(1 if process_mode else nranks))
    res = _batchable(routine, attrs)(_groups.rank_operand(axis_name), a, *([b] if routine in TAKES_B else []))
    if routine == POTRI:
        return res[0], None, res[1]
    if routine == GESVD:
        return res[0], (res[1], res[2]), res[3]
    return res[0], res[1], res[2]


def _ffi(routine: int, attrs: dict, rank: jax.Array, a: jax.Array, *b: jax.Array) -> tuple:
    """The handler's custom call for one matrix (operands and results as
    adapters/jax/ffi.c lists them)."""
    ins = [rank, a, *b]
    outs = [jax.ShapeDtypeStruct(a.shape, a.dtype)]
    in_layouts, out_layouts, aliases = [None, _COLMAJOR], [_COLMAJOR], {1: 0}
    nrhs = 0
    if routine in TAKES_B:
        nrhs = b[0].shape[1]
        in_layouts.append(_COLMAJOR)
        outs.append(jax.ShapeDtypeStruct(b[0].shape, b[0].dtype))
        out_layouts.append(_COLMAJOR)
        aliases[2] = 1
        if routine == GESVD:  # min(m, n) real singular values
            outs.append(jax.ShapeDtypeStruct((min(a.shape[0], int(attrs["n"])),), jnp.finfo(a.dtype).dtype))
            out_layouts.append(None)
    elif routine == SYEVD:
        outs.append(jax.ShapeDtypeStruct((a.shape[0],), jnp.finfo(a.dtype).dtype))  # real eigenvalues
        out_layouts.append(None)
    outs.append(jax.ShapeDtypeStruct((1,), jnp.int32))
    out_layouts.append(None)
    call = jax.ffi.ffi_call(_lib.TARGET, outs, input_layouts=in_layouts, output_layouts=out_layouts,
                            input_output_aliases=aliases, has_side_effect=False)
    return tuple(call(*ins, nrhs=np.int64(nrhs), **attrs))


def _batchable(routine: int, attrs: dict) -> Callable:
    """_ffi with a batching rule (jax.vmap) for this routine and attributes."""

    @jax.custom_batching.custom_vmap
    def call(rank, a, *b):
        return _ffi(routine, attrs, rank, a, *b)

    @call.def_vmap
    def rule(axis_size, in_batched, rank, a, *b):
        return _batch_rule(call, routine, axis_size, in_batched, rank, a, *b)

    return call


def _batch_rule(call: Callable, routine: int, size: int, in_batched: list, rank: jax.Array,
                a: jax.Array, *b: jax.Array) -> tuple[tuple, tuple]:
    """vmap of one device's call over a leading batch axis.

    One matrix A for many B (the routines with B): a single call with the B's side by
    side as columns, since A X_i = B_i for every i is A [X_1 ...] = [B_1 ...].
    Otherwise one call per matrix, in a loop; each iteration's group is told
    apart by the replica index (replica * size + i), so no two iterations
    (nor two batch levels of nested vmaps) ever share a group, and the
    handler needs no batch dimension.  docs/jax.md has the measurements
    behind the choice.
    """
    if in_batched[0]:
        raise NotImplementedError("muster_jax: the rank operand cannot be batched")
    if routine in SOLVES and not in_batched[1]:
        bb = b[0]  # batched: (size, ld, nrhs)
        cols = jnp.moveaxis(bb, 0, 1).reshape(bb.shape[1], size * bb.shape[2])
        a_out, x, status = call(rank, a, cols)
        x = jnp.moveaxis(x.reshape(bb.shape[1], size, bb.shape[2]), 1, 0)
        return (a_out, x, status), (False, True, False)
    ops = [x if batched else jnp.broadcast_to(x, (size,) + x.shape)
           for x, batched in zip((a, *b), in_batched[1:])]

    def one(args):
        i, *xs = args
        return call(rank.at[1].set(rank[1] * size + i), *xs)

    outs = jax.lax.map(one, (jnp.arange(size, dtype=rank.dtype), *ops))
    return tuple(outs), (True,) * len(outs)


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


class Config(NamedTuple):
    """Everything of a call but the arrays (static, hashable)."""
    mesh: Mesh
    pl: _sharding.Placement
    spec: tuple                 # A's PartitionSpec, as a tuple
    T_A: int | None
    return_status: bool
    cyclic_1d: bool
    provider: str | None

    def launch(self, impl, arrays: tuple, **static) -> tuple:
        """impl on arrays through launch, with this configuration."""
        config = (impl.__name__, tuple(x.shape for x in arrays), str(arrays[0].dtype), self,
                  tuple(sorted(static.items())))
        return launch(impl, arrays, self.mesh, config, T_A=self.T_A, pl=self.pl,
                      return_status=self.return_status, cyclic_1d=self.cyclic_1d, provider=self.provider,
                      **static)

    def out_spec(self) -> P:
        """Where a matrix result (A^-1) is: like A, or replicated when N does
        not divide evenly over the devices."""
        even = _layout.block_padded_order(self.pl.N, self.pl.R) == self.pl.N
        return P(*self.spec) if even or self.cyclic_1d else P(None, None)

    def check_differentiable(self) -> None:
        """The derivative rules work on A in the block layout.

        Raises:
          NotImplementedError: A is in the cyclic layout.
        """
        if self.cyclic_1d:
            raise NotImplementedError("muster_jax: derivatives need A in the block layout (cyclic_1d=False); "
                                      "solve the cyclic form without differentiating it")
