"""getrs (lu_solve) and gels (least_squares) on a mesh, as functions JAX
can differentiate (JVP rules; JAX transposes them for reverse mode), and
their implementation (one shard_map around the handler's call).

  getrs  X = A^-1 B           dX = A^-1 (dB - dA X)
  gels   X = A^+ B (m >= n,   dX = (A^H A)^-1 (A^H (dB - dA X) + dA^H R),
         full column rank)    R = B - A X

The runtime does not hand back getrs's LU factors (their row pivots would
not travel back: muster.h), so each derivative solve is one more getrs:
A^-1 for forward mode, A^-T (a getrs of A^T) for reverse mode.  gels's
derivative solves with the Gram matrix A^H A, Cholesky-factored once by
potrs (the factor kept, as potrs's own rule keeps it) and applied with
_factor's distributed triangular solves, forward and reverse; it conditions
as cond(A)^2 does, where the forward solve (QR) conditions as cond(A).

Each solve of a rule is the `solve` of a lax.custom_linear_solve whose
matvec is A's (A^H A's) product, so JAX finds the derivatives in A of every
order through the matvec, and the primal values come from the
differentiable functions again: derivatives of any order work.
"""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from . import _algebra, _call, _cholesky_rules, _sharding
from ._call import GETRS, NO_FACTOR, Config

_REP = P(None, None)


@partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def solve(cfg: Config, routine: int, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """X for getrs (A X = B) or gels (min ||A X - B||).

    Args:
      cfg: the call's configuration (cfg.pl.N: A's columns).
      routine: GETRS or GELS.
      a: A (n x n; gels m x n), as the caller passed it.
      b: B, rows as A's, nrhs columns.

    Returns:
      (X replicated (n x nrhs), status int32).
    """
    return cfg.launch(_impl, (a, b), routine=routine)


@solve.defjvp
def _solve_jvp(cfg, routine, primals, tangents):
    a, b = primals
    da, db = tangents
    x, status = solve(cfg, routine, a, b)  # differentiable again: the rule nests
    mesh = cfg.mesh
    r = db - _algebra.mm(da, x, mesh, _REP)  # dB - dA X
    if routine == GETRS:
        dx = _lu_linear_solve(cfg, a, r)
    else:
        res = _sharding.constrain(b, mesh, _REP) - _algebra.mm(a, x, mesh, _REP)  # R = B - A X
        rhs = _algebra.mm(_algebra.adjoint(a), r, mesh, _REP) + _algebra.mm(_algebra.adjoint(da), res, mesh, _REP)
        dx = _gram_solve(cfg, a, rhs)
    return (x, status), (dx, _algebra.status_tangent(status))


def _lu_linear_solve(cfg: Config, a: jax.Array, r: jax.Array) -> jax.Array:
    """A^-1 r, linear in r (JAX transposes it: A^-T through a getrs of
    A^T) and differentiable in A through its matvec."""
    a0 = jax.lax.stop_gradient(a)

    def getrs(m, rhs):
        return cfg.launch(_impl, (m, rhs), routine=GETRS)[0]

    return jax.lax.custom_linear_solve(lambda v: _algebra.mm(a, v, cfg.mesh, _REP),
                                       _sharding.constrain(r, cfg.mesh, _REP),
                                       lambda _, rhs: getrs(a0, rhs), lambda _, rhs: getrs(a0.T, rhs))


def _gram_solve(cfg: Config, a: jax.Array, rhs: jax.Array) -> jax.Array:
    """(A^H A)^-1 rhs: potrs factors A^H A once (factor kept) and
    _algebra.cho_solve applies it, differentiable in A through A^H A."""
    pl = cfg.pl
    gcfg = Config(cfg.mesh, _sharding.Placement(1, pl.axis, pl.R, pl.N), (None, pl.axis), None,
                  cfg.return_status, False, cfg.provider)
    gram = _algebra.mm(_algebra.adjoint(a), a, cfg.mesh, gcfg.out_spec())  # n x n: column blocks if even
    g0 = jax.lax.stop_gradient(gram)
    l = gcfg.launch(_cholesky_rules.potrs_impl, (g0, jnp.zeros((pl.N, 1), a.dtype)), keep_factor=True)[0]
    return _algebra.cho_solve(gram, l, rhs, mesh=cfg.mesh, axis=pl.axis, n=pl.N)


def _impl(a, b, *, routine, T_A, mesh, pl, return_status, cyclic_1d, provider, site):
    """(X, status): A's columns in blocks over pl.axis, B replicated."""
    a = _sharding.place_general(a, mesh, pl)
    b = _sharding.constrain(b, mesh, _REP)

    def body(a_loc, b_loc):
        _, x, status = _call.local_solve(routine, a_loc, b_loc, axis_name=pl.axis, n=pl.N, T_A=T_A,
                                         flags=NO_FACTOR, provider=provider, return_status=return_status,
                                         process_mode=_sharding.spans_processes(mesh), site=site)
        return x, status

    x, status = jax.shard_map(body, mesh=mesh, in_specs=(P(None, pl.axis), _REP),
                              out_specs=(_REP, P(None)), check_vma=False)(a, b)
    return x[:pl.N], status[0]
