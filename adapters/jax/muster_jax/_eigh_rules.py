"""syevd on a mesh, as a function JAX can differentiate (a JVP rule; JAX
transposes it for reverse mode), and its implementation.

With A = V diag(w) V^H and C = V^H herm(dA) V:

  dw = Re diag(C)
  dV = V (F o C),  F_ij = 1 / (w_j - w_i) for i != j, F_ii = 0

the rule jnp.linalg.eigh uses, with the same caveats: the eigenvalues'
derivative is always defined; the eigenvectors' assumes distinct
eigenvalues (for a repeated one F is infinite and dV is not finite: such
eigenvectors are not unique, so they have no derivative), and it fixes each
vector's phase so that V^H dV has a zero diagonal, so only functions that
do not depend on the vectors' phases (signs) have meaningful derivatives
through V.
"""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from . import _algebra, _call, _mesh_types, _sharding
from ._call import NO_VECTORS, SYEVD, Config


@partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def syevd(cfg: Config, vectors: bool, a: jax.Array) -> tuple:
    """Eigenvalues (and eigenvectors) of A.

    Args:
      cfg: the call's configuration.
      vectors: compute the eigenvectors too.
      a: A as the caller passed it.

    Returns:
      (w, V, status); V is None without vectors.
    """
    w, v, status = cfg.launch(_syevd_impl, (a,), vectors=vectors)
    return w, (v if vectors else None), status


@syevd.defjvp
def _syevd_jvp(cfg, vectors, primals, tangents):
    cfg.check_differentiable()
    (a,), (da,) = primals, tangents
    da = _mesh_types.pin_tangent(da, cfg.mesh)
    w, v, status = syevd(cfg, True, a)  # dw needs V too; differentiable again: the rule nests
    vspec = P(None, cfg.pl.axis) if cfg.out_spec() != P(None, None) else P(None, None)

    mesh, mm = cfg.mesh, _algebra.mm
    c = mm(_algebra.adjoint(v), mm(_algebra.herm(da, mesh, vspec), v, mesh, vspec), mesh, vspec)
    off = ~jnp.eye(w.shape[0], dtype=bool)
    # the diagonal by a masked column sum: jnp.diagonal's gather has no
    # placement jax can pick under Explicit axes
    dw = jnp.real(_sharding.constrain(jnp.sum(jnp.where(off, 0, c), axis=0), mesh, P(None))).astype(w.dtype)
    gap = w[None, :] - w[:, None]
    f = _sharding.constrain(jnp.where(off, 1 / jnp.where(off, gap, 1), 0).astype(v.dtype), mesh, vspec)
    dv = mm(v, f * c, mesh, vspec)
    st = _algebra.status_tangent(status)
    if not vectors:
        return (w, None, status), (dw, None, st)
    return (w, v, status), (dw, dv, st)


def _syevd_impl(a, *, T_A, mesh, pl, vectors, return_status, cyclic_1d, provider, site):
    a, a_spec, Np = _sharding.place_a(a, mesh, pl, cyclic_1d)

    def body(a_loc):
        v, w, status = _call.local_solve(SYEVD, _sharding.to_colblock(a_loc, pl.dim), axis_name=pl.axis,
                                         n=pl.N, T_A=T_A, cyclic_1d=cyclic_1d,
                                         flags=0 if vectors else NO_VECTORS, provider=provider,
                                         return_status=return_status,
                                         process_mode=_sharding.spans_processes(mesh), site=site)
        return w, v, status

    w, v, status = jax.shard_map(body, mesh=mesh, in_specs=(a_spec,),
                                 out_specs=(P(None), P(None, pl.axis), P(None)), check_vma=False)(a)
    if not cyclic_1d and Np != pl.N:
        v = _sharding.constrain(v, mesh, P(None, None))[:pl.N, :pl.N]
    return w[:pl.N], v, status[0]
