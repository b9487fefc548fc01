"""The solves: one ffi_call per device inside shard_map, and the wrappers.

Inside shard_map every device runs one instance of the muster_jax FFI
handler with its own column block of A; the instances meet in a muster group
(one per launch and call site) and the runtime runs the provider once, from
the leader, with every shard.  See docs/jax.md.
"""
import ctypes
import hashlib
import itertools
import threading
import os
import zlib
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from . import _lib

POTRS, POTRI, SYEVD = 1, 2, 3
_NAMES = {POTRS: "potrs", POTRI: "potri", SYEVD: "syevd"}
NO_VECTORS = 0x1  # MUSTER_NO_VECTORS
NO_FACTOR = 0x2   # MUSTER_NO_FACTOR: potrs may leave A unspecified (we drop it)
LAYOUT_BLOCK, LAYOUT_CYCLIC = 0, 1
_COLMAJOR = (1, 0)  # jax.ffi layouts are major-to-minor: (1, 0) is column-major
_DTYPES = (jnp.float32, jnp.float64, jnp.complex64, jnp.complex128)

_trace_sites = itertools.count(1)


# ---- tiles ---------------------------------------------------------------------


def calculate_all_valid_T_A(N, ndev, T_A_max=None):
    """All tile sizes the runtime accepts for an N x N matrix on ndev devices,
    ascending (the runtime's muster_layout_valid_tiles, so the rule is one)."""
    lib = _lib.runtime()
    cap = 1 << 16
    buf = (ctypes.c_int64 * cap)()
    cnt = lib.muster_layout_valid_tiles(int(N), int(ndev), buf, cap)
    if cnt < 0:
        raise ValueError(_lib.last_error())
    if cnt > cap:
        buf = (ctypes.c_int64 * cnt)()
        cnt = lib.muster_layout_valid_tiles(int(N), int(ndev), buf, cnt)
    tiles = [int(buf[i]) for i in range(cnt)]
    if T_A_max is not None:
        tiles = [t for t in tiles if t <= T_A_max]
    return tiles


def check_T_A(N, T_A, ndev):
    """Raise ValueError (naming the nearest valid tiles) if T_A is not valid."""
    lib = _lib.runtime()
    if int(T_A) < 1:
        raise ValueError(f"T_A must be >= 1, got {T_A}")
    if lib.muster_layout_check_tile(int(N), int(T_A), int(ndev)) < 0:
        raise ValueError(_lib.last_error())


def local_cols(N, T_A, ndev):
    """Padded column count of one device's shard in the cyclic layout."""
    v = _lib.runtime().muster_layout_local_cols(int(N), int(T_A), int(ndev))
    if v < 0:
        raise ValueError(_lib.last_error())
    return int(v)


# ---- the per-device call (inside shard_map) --------------------------------------------


def _real_dtype(dt):
    return jnp.float32 if dt in (jnp.float32, jnp.complex64) else jnp.float64


def _group_key():
    """'' in one process (the handler uses its pid); else a key every
    process of this jax.distributed job computes alike."""
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


def _rank_operand(axis_name):
    """int32[2]: this device's rank along axis_name, and its replica index
    over the other manual mesh axes (each replica solves on its own)."""
    rank = jax.lax.axis_index(axis_name)
    replica = jnp.int32(0)
    am = jax.sharding.get_abstract_mesh()
    manual = set(getattr(am, "manual_axes", ()) or ())
    for ax in am.axis_names:
        if ax != axis_name and ax in manual:
            replica = replica * am.shape[ax] + jax.lax.axis_index(ax)
    return jnp.stack([rank, replica]).astype(jnp.int32)


def _axis_size(axis_name):
    return int(jax.sharding.get_abstract_mesh().shape[axis_name])


def _local_solve(routine, a, b=None, *, axis_name, n, tile=0, layout=LAYOUT_BLOCK, flags=0,
                 provider=None, return_status=False, process_mode=None, site=None):
    """One device's call.  a: its column block (ld x w), b: all of B (ld x nrhs).
    Returns (a_out, b_out | w | None, status int32[1])."""
    if a.dtype not in _DTYPES:
        raise TypeError(f"muster_jax: dtype {a.dtype} not supported (float32, float64, complex64, complex128)")
    ld = a.shape[0]
    nranks = _axis_size(axis_name)
    if process_mode is None:
        process_mode = jax.process_count() > 1
    if site is None:
        site = next(_trace_sites)
    ins = [_rank_operand(axis_name), a]
    outs = [jax.ShapeDtypeStruct(a.shape, a.dtype)]
    in_layouts = [None, _COLMAJOR]
    out_layouts = [_COLMAJOR]
    aliases = {1: 0}
    if routine == POTRS:
        if b.dtype != a.dtype:
            raise TypeError(f"muster_jax: b has dtype {b.dtype}, A has {a.dtype}")
        ins.append(b)
        in_layouts.append(_COLMAJOR)
        outs.append(jax.ShapeDtypeStruct(b.shape, b.dtype))
        out_layouts.append(_COLMAJOR)
        aliases[2] = 1
    elif routine == SYEVD:
        outs.append(jax.ShapeDtypeStruct((ld,), _real_dtype(a.dtype)))
        out_layouts.append(None)
    outs.append(jax.ShapeDtypeStruct((1,), jnp.int32))
    out_layouts.append(None)
    call = jax.ffi.ffi_call(_lib.TARGET, outs, input_layouts=in_layouts, output_layouts=out_layouts,
                            input_output_aliases=aliases, has_side_effect=False)
    res = call(*ins, routine=np.int32(routine), n=np.int64(n),
               nrhs=np.int64(b.shape[1] if routine == POTRS else 0), tile=np.int64(tile or 0),
               layout=np.int32(layout), flags=np.int32(flags), nranks=np.int32(nranks),
               provider=str(provider or ""), group_key=_group_key(), site=np.int64(site),
               return_status=np.int32(bool(return_status)), process_mode=np.int32(bool(process_mode)),
               # every rank in this process: the handler may reuse group names
               local_ranks=np.int32(1 if process_mode else nranks))
    if routine == POTRI:
        return res[0], None, res[1]
    return res[0], res[1], res[2]


# ---- shard_map-context variants ----------------------------------------------------------


def potrs_shardmap_ctx(a, b, T_A=None, *, axis_name="x", n=None, cyclic_1d=False, provider=None,
                       return_status=True):
    """Inside the caller's shard_map: a is this device's column block
    (N x N/ndev, or its cyclic shard if cyclic_1d), b all of B (N x nrhs).
    Returns (x, status): x (N x nrhs) on every device, status int32[1]
    (0 ok, k > 0 leading minor k not positive definite, < 0 MUSTER_E* code).
    With return_status=False a failure raises instead and x alone is returned."""
    n = a.shape[0] if n is None else n
    _, x, status = _local_solve(POTRS, a, b, axis_name=axis_name, n=n, tile=T_A or 0,
                                layout=LAYOUT_CYCLIC if cyclic_1d else LAYOUT_BLOCK, flags=NO_FACTOR,
                                provider=provider, return_status=return_status)
    return (x, status) if return_status else x


def potri_shardmap_ctx(a, T_A=None, *, axis_name="x", n=None, cyclic_1d=False, provider=None,
                       return_status=True):
    """Inside shard_map: returns (this device's block of inv(A), status)."""
    n = a.shape[0] if n is None else n
    inv, _, status = _local_solve(POTRI, a, axis_name=axis_name, n=n, tile=T_A or 0,
                                  layout=LAYOUT_CYCLIC if cyclic_1d else LAYOUT_BLOCK,
                                  provider=provider, return_status=return_status)
    return (inv, status) if return_status else inv


def syevd_shardmap_ctx(a, T_A=None, *, axis_name="x", n=None, cyclic_1d=False, provider=None,
                       return_eigenvectors=True, return_status=True):
    """Inside shard_map: returns (eigenvalues (N,), this device's block of the
    eigenvectors, status); without eigenvectors (eigenvalues, status)."""
    n = a.shape[0] if n is None else n
    v, w, status = _local_solve(SYEVD, a, axis_name=axis_name, n=n, tile=T_A or 0,
                                layout=LAYOUT_CYCLIC if cyclic_1d else LAYOUT_BLOCK,
                                flags=0 if return_eigenvectors else NO_VECTORS, provider=provider,
                                return_status=return_status)
    out = (w, v) if return_eigenvectors else (w,)
    return out + (status,) if return_status else (out if return_eigenvectors else w)


# jaxmg's names for the same functions
potrs_no_shardmap = potrs_shardmap_ctx
potri_no_shardmap = potri_shardmap_ctx
syevd_no_shardmap = syevd_shardmap_ctx


# ---- wrappers with mesh / in_specs ------------------------------------------------------------


def _axis_of(spec, what):
    parts = tuple(spec) + (None,) * (2 - len(tuple(spec)))
    if len(parts) != 2:
        raise ValueError(f"{what}: expected a 2-D PartitionSpec, got {spec}")
    names = [(i, p) for i, p in enumerate(parts) if p is not None]
    if len(names) != 1:
        raise ValueError(f"{what}: A must be sharded along exactly one dimension, "
                         f"P(None, 'x') (columns) or P('x', None) (rows); got {spec}")
    dim, ax = names[0]
    if isinstance(ax, (tuple, list)):
        if len(ax) != 1:
            raise ValueError(f"{what}: A must be sharded over one mesh axis, got {spec}")
        ax = ax[0]
    return dim, ax


def _check_b_spec(spec, axis, what):
    parts = tuple(spec) + (None,) * (2 - len(tuple(spec)))
    if len(parts) != 2 or parts[1] is not None or parts[0] not in (None, axis, (axis,)):
        raise ValueError(f"{what}: b must be replicated P(None, None) or row-sharded "
                         f"P('{axis}', None); got {spec}")


def _mesh_or_context(mesh):
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


def _process_mode(mesh):
    return len({d.process_index for d in mesh.devices.flat}) > 1


def _explicit_axes(mesh):
    types = getattr(mesh, "axis_types", None) or ()
    return {ax for ax, t in zip(mesh.axis_names, types) if "Explicit" in str(t)}


def _constrain(x, mesh, spec):
    """Put x in `spec`: reshard over Explicit mesh axes, a sharding
    constraint over Auto ones (jax refuses the other pairings)."""
    used = {p for part in spec if part is not None
            for p in (part if isinstance(part, (tuple, list)) else (part,))}
    explicit = _explicit_axes(mesh)
    if explicit and used <= explicit:
        return jax.sharding.reshard(x, NamedSharding(mesh, spec))
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))


def _in_mesh(mesh, traced):
    """Eager calls enter the mesh (jax wants it for Explicit axes); traced
    ones run in the caller's context."""
    if traced:
        import contextlib
        return contextlib.nullcontext()
    return jax.set_mesh(mesh)


def _is_traced(*xs):
    return any(isinstance(x, jax.core.Tracer) for x in xs)


def _site_for(config, traced):
    """A fresh site per call inside a user trace (two solves in one program
    never share a group); a stable one for eager calls, so the jitted
    implementation is compiled once per configuration."""
    if traced:
        return next(_trace_sites)
    return (zlib.crc32(repr(config).encode()) & 0x3FFFFFFF) | 0x40000000


def _prepare(routine, a, T_A, mesh, a_spec, cyclic_1d, what):
    if a.ndim != 2:
        raise ValueError(f"{what}: a must be 2-D, got shape {a.shape}")
    if a.dtype not in _DTYPES:
        raise TypeError(f"{what}: dtype {a.dtype} not supported (float32, float64, complex64, complex128)")
    dim, axis = _axis_of(a_spec, what)
    if axis not in mesh.shape:
        raise ValueError(f"{what}: mesh has no axis {axis!r} (axes {tuple(mesh.shape)})")
    R = int(mesh.shape[axis])
    N = a.shape[0]
    if cyclic_1d:
        if T_A is None:
            raise ValueError(f"{what}: cyclic_1d=True needs the tile T_A the input was laid out with")
        if dim != 1:
            raise ValueError(f"{what}: a cyclic input must be column-sharded P(None, '{axis}')")
        want = R * local_cols(N, T_A, R)
        if a.shape[1] != want:
            raise ValueError(f"{what}: a cyclic input for N={N}, T_A={T_A} on {R} devices has "
                             f"{want} columns, got {a.shape[1]} (use cyclic_1d_layout)")
    else:
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"{what}: a must be square, got shape {a.shape}")
        if T_A is not None:
            check_T_A(N, T_A, R)
    return dim, axis, R, N


_jitted = {}
_jitted_lock = threading.Lock()


def _compiled(impl, **static):
    """jax.jit of impl with its static configuration bound, one per
    configuration: calls with arrays only take jax's C++ dispatch path."""
    key = (impl.__name__,) + tuple(sorted(static.items()))
    fn = _jitted.get(key)
    if fn is None:
        with _jitted_lock:
            fn = _jitted.setdefault(key, jax.jit(partial(impl, **static)))
    return fn


def _pad_square(a, Np):
    N = a.shape[0]
    return a if Np == N else jnp.pad(a, ((0, Np - N), (0, Np - N)))


def _place_a(a, mesh, dim, axis, R, N, cyclic_1d):
    """A as the solves' shard_map takes it: padded to Np = R * ceil(N / R)
    (block layout; a cyclic input is already padded) and sharded along
    `axis` on dimension `dim`.  Returns (a, its spec, Np)."""
    Np = N if cyclic_1d else R * -(-N // R)
    if not cyclic_1d:
        a = _pad_square(a, Np)
    a_spec = P(None, axis) if dim == 1 else P(axis, None)
    return _constrain(a, mesh, a_spec), a_spec, Np


def _to_colblock(a_loc, dim):
    # a row block of a Hermitian A is the conjugate transpose of its column block
    if dim == 1:
        return a_loc
    return jnp.conj(a_loc).T if jnp.iscomplexobj(a_loc) else a_loc.T


def potrs(a, b, T_A=None, mesh=None, in_specs=None, return_status=False, cyclic_1d=False,
          provider=None):
    """Solve A X = B for Hermitian positive definite A sharded over `mesh`.

    in_specs: (spec of a, spec of b); a P(None, 'x') or P('x', None), b
    P(None, None) or P('x', None).  T_A: tile of the cyclic layout (None: the
    runtime's choice).  Returns X (replicated; 1-D if b was), and the status
    (int32: 0, k > 0 for a leading minor that is not positive definite, or a
    negative MUSTER_E* code) with return_status=True, in which case a failed
    solve returns NaNs instead of raising.  A and b are not modified."""
    what = "muster_jax.potrs"
    mesh = _mesh_or_context(mesh)
    if in_specs is None:
        in_specs = (P(None, mesh.axis_names[0]), P(None, None))
    if not isinstance(in_specs, (tuple, list)) or len(in_specs) != 2:
        raise ValueError(f"{what}: in_specs must be (spec of a, spec of b), got {in_specs}")
    dim, axis, R, N = _prepare(POTRS, a, T_A, mesh, in_specs[0], cyclic_1d, what)
    _check_b_spec(in_specs[1], axis, what)
    vec = b.ndim == 1
    if vec:
        b = b[:, None]
    if b.ndim != 2 or b.shape[0] != N:
        raise ValueError(f"{what}: b must be ({N},) or ({N}, nrhs), got {b.shape}")
    if b.dtype != a.dtype:
        raise TypeError(f"{what}: b has dtype {b.dtype}, a has {a.dtype}")
    config = (POTRS, a.shape, str(a.dtype), b.shape, T_A, mesh, tuple(in_specs[0]), dim, axis,
              bool(return_status), bool(cyclic_1d), provider)
    traced = _is_traced(a, b)
    site = _site_for(config, traced)
    fn = _compiled(_potrs_impl, T_A=T_A, mesh=mesh, dim=dim, axis=axis, R=R, N=N,
                   return_status=bool(return_status), cyclic_1d=bool(cyclic_1d), provider=provider,
                   site=site)
    with _in_mesh(mesh, traced):
        x, status = fn(a, b)
    if vec:
        x = x[:, 0]
    return (x, status) if return_status else x


def _potrs_impl(a, b, *, T_A, mesh, dim, axis, R, N, return_status, cyclic_1d, provider, site):
    a, a_spec, Np = _place_a(a, mesh, dim, axis, R, N, cyclic_1d)
    b = b if Np == N else jnp.pad(b, ((0, Np - N), (0, 0)))
    b = _constrain(b, mesh, P(None, None))

    def body(a_loc, b_loc):
        _, x, status = _local_solve(POTRS, _to_colblock(a_loc, dim), b_loc, axis_name=axis, n=N,
                                    tile=T_A or 0, layout=LAYOUT_CYCLIC if cyclic_1d else LAYOUT_BLOCK,
                                    flags=NO_FACTOR, provider=provider, return_status=return_status,
                                    process_mode=_process_mode(mesh), site=site)
        return x, status

    x, status = jax.shard_map(body, mesh=mesh, in_specs=(a_spec, P(None, None)),
                              out_specs=(P(None, None), P(None)), check_vma=False)(a, b)
    return x[:N], status[0]


def potri(a, T_A=None, mesh=None, in_specs=None, return_status=False, cyclic_1d=False,
          provider=None):
    """The full inverse of a Hermitian positive definite A, sharded like a.
    in_specs: the spec of a (or a 1-tuple).  With cyclic_1d the result stays in
    the cyclic layout (cyclic_1d_to_block turns it back)."""
    what = "muster_jax.potri"
    mesh = _mesh_or_context(mesh)
    spec = _single_spec(in_specs, mesh)
    dim, axis, R, N = _prepare(POTRI, a, T_A, mesh, spec, cyclic_1d, what)
    config = (POTRI, a.shape, str(a.dtype), T_A, mesh, tuple(spec), bool(return_status),
              bool(cyclic_1d), provider)
    traced = _is_traced(a)
    site = _site_for(config, traced)
    fn = _compiled(_potri_impl, T_A=T_A, mesh=mesh, dim=dim, axis=axis, R=R, N=N,
                   return_status=bool(return_status), cyclic_1d=bool(cyclic_1d), provider=provider,
                   site=site)
    with _in_mesh(mesh, traced):
        inv, status = fn(a)
    return (inv, status) if return_status else inv


def _single_spec(in_specs, mesh):
    if in_specs is None:
        return P(None, mesh.axis_names[0])
    if isinstance(in_specs, P):
        return in_specs
    if isinstance(in_specs, (tuple, list)) and len(in_specs) == 1 and isinstance(in_specs[0], P):
        return in_specs[0]
    raise ValueError(f"in_specs must be the PartitionSpec of a (or a 1-tuple of it), got {in_specs}")


def _potri_impl(a, *, T_A, mesh, dim, axis, R, N, return_status, cyclic_1d, provider, site):
    a, a_spec, Np = _place_a(a, mesh, dim, axis, R, N, cyclic_1d)

    def body(a_loc):
        inv, _, status = _local_solve(POTRI, _to_colblock(a_loc, dim), axis_name=axis, n=N,
                                      tile=T_A or 0, layout=LAYOUT_CYCLIC if cyclic_1d else LAYOUT_BLOCK,
                                      provider=provider, return_status=return_status,
                                      process_mode=_process_mode(mesh), site=site)
        return _to_colblock(inv, dim), status  # the inverse is Hermitian too

    inv, status = jax.shard_map(body, mesh=mesh, in_specs=(a_spec,), out_specs=(a_spec, P(None)),
                                check_vma=False)(a)
    if not cyclic_1d and Np != N:
        # an N not divisible by the devices cannot stay sharded: replicate
        inv = _constrain(inv, mesh, P(None, None))[:N, :N]
    return inv, status[0]


def syevd(a, T_A=None, mesh=None, in_specs=None, return_eigenvectors=True, return_status=False,
          cyclic_1d=False, provider=None):
    """Eigenvalues (ascending, replicated) and eigenvectors (columns, sharded
    P(None, axis)) of a Hermitian A.  Returns (eigenvalues, eigenvectors), or
    the eigenvalues alone with return_eigenvectors=False; status appended with
    return_status=True."""
    what = "muster_jax.syevd"
    mesh = _mesh_or_context(mesh)
    spec = _single_spec(in_specs, mesh)
    dim, axis, R, N = _prepare(SYEVD, a, T_A, mesh, spec, cyclic_1d, what)
    config = (SYEVD, a.shape, str(a.dtype), T_A, mesh, tuple(spec), bool(return_eigenvectors),
              bool(return_status), bool(cyclic_1d), provider)
    traced = _is_traced(a)
    site = _site_for(config, traced)
    fn = _compiled(_syevd_impl, T_A=T_A, mesh=mesh, dim=dim, axis=axis, R=R, N=N,
                   vectors=bool(return_eigenvectors), return_status=bool(return_status),
                   cyclic_1d=bool(cyclic_1d), provider=provider, site=site)
    with _in_mesh(mesh, traced):
        w, v, status = fn(a)
    out = (w, v) if return_eigenvectors else (w,)
    if return_status:
        return out + (status,)
    return out if return_eigenvectors else w


def _syevd_impl(a, *, T_A, mesh, dim, axis, R, N, vectors, return_status, cyclic_1d, provider, site):
    a, a_spec, Np = _place_a(a, mesh, dim, axis, R, N, cyclic_1d)

    def body(a_loc):
        v, w, status = _local_solve(SYEVD, _to_colblock(a_loc, dim), axis_name=axis, n=N,
                                    tile=T_A or 0, layout=LAYOUT_CYCLIC if cyclic_1d else LAYOUT_BLOCK,
                                    flags=0 if vectors else NO_VECTORS, provider=provider,
                                    return_status=return_status, process_mode=_process_mode(mesh),
                                    site=site)
        return w, v, status

    w, v, status = jax.shard_map(body, mesh=mesh, in_specs=(a_spec,),
                                 out_specs=(P(None), P(None, axis), P(None)), check_vma=False)(a)
    if not cyclic_1d and Np != N:
        v = _constrain(v, mesh, P(None, None))[:N, :N]
    return w[:N], v, status[0]


# ---- the cyclic layout in JAX -------------------------------------------------------------


def _cyclic_index(N, T_A, R):
    """For each column of the cyclic global array (R shards of LC columns),
    the global column it holds, or -1 for padding."""
    LC = local_cols(N, T_A, R)
    r = np.arange(R)[:, None, None]
    k = np.arange(LC // T_A)[None, :, None]
    t = np.arange(T_A)[None, None, :]
    g = ((k * R + r) * T_A + t).reshape(-1)
    return np.where(g < N, g, -1), LC


def cyclic_1d_layout(a, T_A, mesh=None, axis_name=None):
    """A (N x N, any sharding) -> its 1-D column block-cyclic form with tile
    T_A: an N x (ndev*LC) array sharded P(None, axis) whose shard r is rank
    r's cyclic buffer (LC = muster_layout_local_cols; padding columns zero)."""
    mesh = _mesh_or_context(mesh)
    axis = axis_name or mesh.axis_names[0]
    R = int(mesh.shape[axis])
    idx, _ = _cyclic_index(a.shape[0], T_A, R)
    with _in_mesh(mesh, _is_traced(a)):
        return _gather_cols(a, idx=tuple(int(i) for i in idx), mesh=mesh, axis=axis, shard=True)


def cyclic_1d_to_block(a_cyc, N, T_A, mesh=None, axis_name=None):
    """Inverse of cyclic_1d_layout: N x (ndev*LC) cyclic -> N x N, sharded
    P(None, axis) when N divides evenly (else replicated)."""
    mesh = _mesh_or_context(mesh)
    axis = axis_name or mesh.axis_names[0]
    R = int(mesh.shape[axis])
    idx, _ = _cyclic_index(N, T_A, R)
    pos = np.empty(N, dtype=np.int64)
    pos[idx[idx >= 0]] = np.nonzero(idx >= 0)[0]
    with _in_mesh(mesh, _is_traced(a_cyc)):
        return _gather_cols(a_cyc, idx=tuple(int(i) for i in pos), mesh=mesh, axis=axis,
                            shard=N % R == 0)


@partial(jax.jit, static_argnames=("idx", "mesh", "axis", "shard"))
def _gather_cols(a, *, idx, mesh, axis, shard):
    """Columns idx of a (-1: a zero column), gathered from a replicated copy
    (simple, and unambiguous for jax's sharding rules; a utility, not the
    solve path: the solves relayout inside the runtime)."""
    idx = np.asarray(idx)
    a = _constrain(a, mesh, P(None, None))
    cols = jnp.asarray(np.where(idx >= 0, idx, 0))
    out = jnp.where(jnp.asarray(idx >= 0)[None, :], jnp.take(a, cols, axis=1), jnp.zeros((), a.dtype))
    return _constrain(out, mesh, P(None, axis) if shard else P(None, None))
