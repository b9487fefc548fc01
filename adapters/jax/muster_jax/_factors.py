"""geqrf, gesvd and polar on a mesh: one shard_map around the handler's
call, and the factors read back out of A, B and W.

The runtime's rule (docs/factorizations.md, muster_routine_outputs) puts the
factor with A's shape (m x n) into A, distributed as A was, and packs the
others into B (m rows, replicated), each column-major from its element
offset; singular values go into W.  _lib.routine_outputs reads that rule
from the runtime, so it lives once.  A is spread over the devices by its
columns, any m (tall or wide).  These are the plain values; the derivative
rules are in _factor_rules.
"""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

from . import _call, _lib, _sharding
from ._call import FULL_MATRICES, GESVD, NO_VECTORS, Config

_REP = P(None, None)
# the factors' names (muster_factor_t's, _runtime.FACTOR_NAMES), the keys of factor()'s result
Q, R, U, VH, UP, H = "Q", "R", "U", "VH", "UP", "H"


def config(a: jax.Array, mesh: Mesh, spec: P, T_A: int | None, provider: str | None, what: str,
           return_status: bool = False) -> Config:
    """The call's configuration for an m x n A (any m) sharded by spec
    (return_status: a failure gives NaN factors and its status instead of
    raising).

    Raises:
      ValueError, TypeError: A not 2-D, its dtype, or the spec.
    """
    if a.ndim != 2:
        raise ValueError(f"{what}: a must be 2-D, got shape {a.shape}")
    if a.dtype not in _sharding.DTYPES:
        raise TypeError(f"{what}: dtype {a.dtype} not supported (float32, float64, complex64, complex128)")
    dim, axis = _sharding.axis_of(spec, what)
    pl = _sharding.Placement(dim, axis, _sharding.axis_size(mesh, axis, what), a.shape[1])
    return Config(mesh, pl, tuple(spec), T_A, bool(return_status), False, provider)


def factor(cfg: Config, routine: int, flags: int, a: jax.Array) -> dict:
    """The factors of A (not differentiable: _factor_rules is).

    Args:
      cfg: config()'s.
      routine: GEQRF, GESVD or POLAR.
      flags: FULL_MATRICES, NO_VECTORS (as the routine takes them).
      a: A, m x n.

    Returns:
      {factor name (Q, R, U, VH, UP, H): its matrix, "s": the singular
      values (gesvd), "status": int32, 0 or as the handler's}, every one
      replicated (the factor in A's place is gathered from A's blocks).
    """
    return cfg.launch(_impl, (a,), routine=routine, flags=flags)


def _unpack(b: jax.Array, parts: list) -> dict:
    """The factors packed column-major into B, one after another."""
    flat = b.T.reshape(-1)  # B's elements in column-major order
    return {what: flat[off:off + rows * cols].reshape(cols, rows).T for what, rows, cols, off in parts}


def _impl(a, *, routine, flags, T_A, mesh, pl, return_status, cyclic_1d, provider, site):
    m = a.shape[0]
    rule = _lib.routine_outputs(routine, flags, m, pl.N)
    a = _sharding.place_general(a, mesh, pl)
    b = _sharding.constrain(jnp.zeros((m, max(rule["b_cols"], 1)), a.dtype), mesh, _REP)

    def body(a_loc, b_loc):
        a_out, rest, status = _call.local_solve(routine, a_loc, b_loc, axis_name=pl.axis, n=pl.N, T_A=T_A,
                                                flags=flags, provider=provider, return_status=return_status,
                                                process_mode=_sharding.spans_processes(mesh), site=site)
        return (a_out, *rest, status) if routine == GESVD else (a_out, rest, status)

    outs = (P(None, pl.axis), _REP) + ((P(None),) if routine == GESVD else ()) + (P(None),)
    res = jax.shard_map(body, mesh=mesh, in_specs=(P(None, pl.axis), _REP), out_specs=outs,
                        check_vma=False)(a, b)
    got = _unpack(res[1], rule["parts"])
    if rule["a_holds"]:
        # replicated, as the others: the derivative rules' tangents are
        got[rule["a_holds"]] = _sharding.constrain(res[0], mesh, _REP)[:, :pl.N]
    if routine == GESVD:
        got["s"] = res[2][:rule["w_count"]]
    got["status"] = res[-1][0]
    return got


def flags_of(full_matrices: bool, compute_uv: bool = True) -> int:
    """The runtime's flags for jnp's arguments."""
    return (FULL_MATRICES if full_matrices and compute_uv else 0) | (0 if compute_uv else NO_VECTORS)
