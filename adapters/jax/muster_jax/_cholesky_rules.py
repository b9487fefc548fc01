"""potrs and potri on a mesh, as functions JAX can differentiate (JVP
rules; JAX transposes them for reverse mode), and their implementations
(one shard_map around the handler's call).

A is Hermitian: the routines read its lower triangle, so a tangent dA
enters through its Hermitian part herm(dA) = (dA + dA^H) / 2, as in JAX's
cholesky: the derivatives are those along Hermitian directions.

  potrs   X = A^-1 B      dX = A^-1 (dB - herm(dA) X); the JVP factors A
                          once (potrs keeping its factor) and every solve of
                          the rule, and of its transpose (reverse mode:
                          B_bar = A^-1 X_bar, A_bar = -B_bar X^H), uses that
                          factor (_algebra.cho_solve)
  potri   Y = A^-1        dY = -Y herm(dA) Y

Each rule computes its primal values through differentiable functions
again (cho_solve; potri itself), so derivatives of any order work.
"""
from functools import partial
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from . import _algebra, _call, _mesh_types, _sharding
from ._call import NO_FACTOR, POTRI, POTRS, Config


# ---- potrs ---------------------------------------------------------------------------------


@partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def potrs(cfg: Config, logdet: bool, a: jax.Array, b: jax.Array) -> tuple:
    """X = A^-1 B, and log det A if asked.

    Args:
      cfg: the call's configuration.
      logdet: also return log det A (from the factor: one more reduction).
      a: A as the caller passed it (N x N, or its cyclic form).
      b: B, N x nrhs.

    Returns:
      (X replicated, log det A or None, status int32).
    """
    _, x, ld, status = cfg.launch(potrs_impl, (a, b), keep_factor=logdet)
    return x, ld, status


@potrs.defjvp
def _potrs_jvp(cfg, logdet, primals, tangents):
    cfg.check_differentiable()
    a, b = primals
    # one factorization serves X and every solve of the rule and its transpose
    l, _, ld, status = cfg.launch(potrs_impl, tuple(map(jax.lax.stop_gradient, (a, b))), keep_factor=True)
    kw = dict(mesh=cfg.mesh, axis=cfg.pl.axis, n=cfg.pl.N)
    x, dx = jax.jvp(lambda a, b: _algebra.cho_solve(a, l, b, **kw), primals, tangents)
    st = _algebra.status_tangent(status)
    if not logdet:
        return (x, None, status), (dx, None, st)
    ld, dld = jax.jvp(lambda a: _logdet(cfg, a, ld), (a,), (tangents[0],))
    return (x, ld, status), (dx, dld, st)


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def _logdet(cfg: Config, a: jax.Array, ld: jax.Array) -> jax.Array:
    """log det A as a function of A, its value ld computed already (what
    makes the rule differentiable again)."""
    return ld


@_logdet.defjvp
def _logdet_jvp(cfg, primals, tangents):
    a, ld = primals
    da = _mesh_types.pin_tangent(tangents[0], cfg.mesh)
    spec = cfg.out_spec()
    inv, _ = potri(cfg, a)  # d log det A = tr(A^-1 dA): A^-1 is needed whole, kept distributed
    # tr(A^-1 herm(dA)) = sum of conj(A^-1) * herm(dA) (A^-1 is Hermitian)
    d = jnp.real(jnp.sum(jnp.conj(inv) * _algebra.herm(da, cfg.mesh, spec)))
    return _logdet(cfg, a, ld), d.astype(ld.dtype)


def potrs_impl(a, b, *, T_A, mesh, pl, return_status, cyclic_1d, provider, site, keep_factor):
    """(the padded factor sharded P(None, axis), X, log det A, status) with
    keep_factor; (None, X, None, status) without."""
    a, a_spec, Np = _sharding.place_a(a, mesh, pl, cyclic_1d)
    b = b if Np == pl.N else jnp.pad(b, ((0, Np - pl.N), (0, 0)))
    b = _sharding.constrain(b, mesh, P(None, None))

    def body(a_loc, b_loc):
        l, x, status = _call.local_solve(POTRS, _sharding.to_colblock(a_loc, pl.dim), b_loc,
                                         axis_name=pl.axis, n=pl.N, T_A=T_A, cyclic_1d=cyclic_1d,
                                         flags=0 if keep_factor else NO_FACTOR, provider=provider,
                                         return_status=return_status,
                                         process_mode=_sharding.spans_processes(mesh), site=site)
        if not keep_factor:
            return x, status
        return l, x, _logdet_of_factor(l, pl), status

    col = P(None, pl.axis)
    if not keep_factor:
        x, status = jax.shard_map(body, mesh=mesh, in_specs=(a_spec, P(None, None)),
                                  out_specs=(P(None, None), P(None)), check_vma=False)(a, b)
        return None, x[:pl.N], None, status[0]
    l, x, ld, status = jax.shard_map(body, mesh=mesh, in_specs=(a_spec, P(None, None)),
                                     out_specs=(col, P(None, None), P(), P(None)), check_vma=False)(a, b)
    return l, x[:pl.N], ld, status[0]


def _logdet_of_factor(l_loc: jax.Array, pl: _sharding.Placement) -> jax.Array:
    """log det A = 2 sum log L_ii, inside shard_map: each device adds the
    diagonal entries of its column block (not the padding's)."""
    w = l_loc.shape[1]
    c0 = jax.lax.axis_index(pl.axis) * w
    d = jnp.diagonal(jax.lax.dynamic_slice_in_dim(l_loc, c0, w, axis=0))
    real = jnp.real(d)
    valid = c0 + jnp.arange(w) < pl.N
    return 2 * jax.lax.psum(jnp.sum(jnp.where(valid, jnp.log(jnp.where(valid, real, 1)), 0)), pl.axis)


# ---- potri ---------------------------------------------------------------------------------


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def potri(cfg: Config, a: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A^-1 (sharded as Config.out_spec says) and the status."""
    return cfg.launch(_potri_impl, (a,))


@potri.defjvp
def _potri_jvp(cfg, primals, tangents):
    cfg.check_differentiable()
    (a,), (da,) = primals, tangents
    da = _mesh_types.pin_tangent(da, cfg.mesh)
    inv, status = potri(cfg, a)  # differentiable again: the rule nests
    spec = cfg.out_spec()
    mesh = cfg.mesh
    dinv = -_algebra.mm(inv, _algebra.mm(_algebra.herm(da, mesh, spec), inv, mesh, spec), mesh, spec)
    return (inv, status), (dinv, _algebra.status_tangent(status))


def _potri_impl(a, *, T_A, mesh, pl, return_status, cyclic_1d, provider, site):
    a, a_spec, Np = _sharding.place_a(a, mesh, pl, cyclic_1d)

    def body(a_loc):
        inv, _, status = _call.local_solve(POTRI, _sharding.to_colblock(a_loc, pl.dim), axis_name=pl.axis,
                                           n=pl.N, T_A=T_A, cyclic_1d=cyclic_1d, provider=provider,
                                           return_status=return_status,
                                           process_mode=_sharding.spans_processes(mesh), site=site)
        return _sharding.to_colblock(inv, pl.dim), status  # the inverse is Hermitian too

    inv, status = jax.shard_map(body, mesh=mesh, in_specs=(a_spec,), out_specs=(a_spec, P(None)),
                                check_vma=False)(a)
    if not cyclic_1d and Np != pl.N:
        # an N not divisible by the devices cannot stay sharded: replicate
        inv = _sharding.constrain(inv, mesh, P(None, None))[:pl.N, :pl.N]
    return inv, status[0]
