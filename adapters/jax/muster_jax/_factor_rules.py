"""geqrf, gesvd and polar as functions JAX can differentiate: JVP rules
(JAX transposes them for reverse mode) with the formulas of JAX's own
qr and svd rules (jax._src.lax.linalg), written from their results:

  qr, m >= n (thin)  dQ = Q (dO - C) + dA R^-1, dR = (C - dO) R,
                     C = Q^H dA R^-1, dO = the skew part of C's lower
                     triangle (plus C's imaginary diagonal, for complex A)
  qr, m < n          the square rule on A's first m columns, and
                     dR_2 = dQ^H A_2 + Q^H dA_2 for the rest
  svd (thin)         JAX's: ds = Re diag(U^H dA V), dU and dV from the
                     differences of the s_i^2 (distinct values needed)
  polar              through the thin SVD: U_p = U V^H, H = V S V^H

Like JAX, the full (complete) forms of a non-square A have no rule
(NotImplementedError): jnp's own complete-QR rule is not implemented here
either.  Each rule calls the differentiable function again for its
primals, so derivatives of any order work.  The products of a rule run on
replicated factors (O(m n k) on every device): fine for the sizes whose
derivatives one takes; the factorization itself is the distributed one.
"""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from . import _factors, _sharding
from ._call import GEQRF, GESVD, POLAR, Config

_REP = P(None, None)


def _h(x):
    return jnp.conj(x.T)


def _rep(cfg: Config, *xs):
    return tuple(_sharding.constrain(x, cfg.mesh, _REP) for x in xs)


@partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def qr(cfg: Config, full: bool, a: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(Q, R) of A: Q m x k and R k x n (k = min(m, n)), or with full Q
    m x m and R m x n."""
    got = _factors.factor(cfg, GEQRF, _factors.flags_of(full), a)
    return got[_factors.Q], got[_factors.R]


def _thin_qr_jvp(q, r, da):
    """JAX's _thin_qr_jvp, for m >= n."""
    da_rinv = jax.lax.linalg.triangular_solve(r, da, left_side=False, lower=False)
    c = _h(q) @ da_rinv
    low = jnp.tril(c, -1)
    do = low - _h(low)
    if jnp.iscomplexobj(c):  # the imaginary part of C's diagonal
        do = do + jnp.diag(1j * jnp.imag(jnp.diagonal(c))).astype(c.dtype)
    return q @ (do - c) + da_rinv, (c - do) @ r


@qr.defjvp
def _qr_jvp(cfg, full, primals, tangents):
    a, = primals
    da, = tangents
    m, n = a.shape
    if full and m > n:
        raise NotImplementedError("muster_jax.linalg.qr: no derivative for mode='complete' of a tall a "
                                  "(m > n); use mode='reduced'")
    q, r = qr(cfg, full, a)
    q0, r0, a0, da = _rep(cfg, q, r, a, da)
    if m >= n:
        dq, dr = _thin_qr_jvp(q0, r0, da)
        return (q, r), (dq, dr)
    dq, dr1 = _thin_qr_jvp(q0, r0[:, :m], da[:, :m])
    dr2 = _h(dq) @ a0[:, m:] + _h(q0) @ da[:, m:]
    return (q, r), (dq, jnp.concatenate([dr1, dr2], axis=1))


@partial(jax.custom_jvp, nondiff_argnums=(0, 1, 2))
def svd(cfg: Config, full: bool, compute_uv: bool, a: jax.Array) -> tuple:
    """(U, s, V^H) of A (thin: U m x k, V^H k x n; full: m x m, n x n),
    or (s,) without vectors."""
    got = _factors.factor(cfg, GESVD, _factors.flags_of(full, compute_uv), a)
    if not compute_uv:
        return (got["s"],)
    return got[_factors.U], got["s"], got[_factors.VH]


@svd.defjvp
def _svd_jvp(cfg, full, compute_uv, primals, tangents):
    a, = primals
    da, = tangents
    m, n = a.shape
    if compute_uv and full and m != n:
        raise NotImplementedError("muster_jax.linalg.svd: no derivative for full_matrices=True of a "
                                  "non-square a (as jnp); pass full_matrices=False")
    u, s, vh = svd(cfg, False, True, a)
    u0, vh0, da = _rep(cfg, u, vh, da)
    v0 = _h(vh0)
    ds_full = _h(u0) @ da @ v0
    ds = jnp.real(jnp.diagonal(ds_full))
    if not compute_uv:
        return (s,), (ds,)
    return (u, s, vh), _svd_vector_tangents(u0, s, v0, da, ds_full, ds)


def _svd_vector_tangents(u, s, v, da, dS, ds):
    """JAX's _svd_jvp_rule for the vectors, thin."""
    m, n = u.shape[0], v.shape[0]
    dt = u.dtype
    s_row = s[None, :]
    diffs = (s_row + s_row.T) * (s_row - s_row.T)
    eye = jnp.eye(s.shape[0], dtype=s.dtype)
    f = (1 / (diffs + eye) - eye).astype(dt)
    dss, sds = s_row.astype(dt) * dS, s_row.T.astype(dt) * dS
    s_zero = (s == 0).astype(s.dtype)
    s_inv = 1 / (s + s_zero) - s_zero
    diag = 0.5 * (dS - _h(dS)) * jnp.diag(s_inv).astype(dt)
    du = u @ (f * (dss + _h(dss)) + diag)
    dv = v @ (f * (sds + _h(sds)))
    if m > n:
        dav = da @ v
        du = du + (dav - u @ (_h(u) @ dav)) / s_row.astype(dt)
    if n > m:
        dahu = _h(da) @ u
        dv = dv + (dahu - v @ (_h(v) @ dahu)) / s_row.astype(dt)
    return du, ds, _h(dv)


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def polar(cfg: Config, a: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(U_p, H) of the right polar decomposition A = U_p H."""
    got = _factors.factor(cfg, POLAR, 0, a)
    return got[_factors.UP], got[_factors.H]


def _polar_from_svd(cfg: Config, a: jax.Array) -> tuple[jax.Array, jax.Array]:
    u, s, vh = _rep(cfg, *svd(cfg, False, True, a))
    h = _h(vh) @ (s[:, None].astype(vh.dtype) * vh)
    return u @ vh, (h + _h(h)) / 2


@polar.defjvp
def _polar_jvp(cfg, primals, tangents):
    return jax.jvp(partial(_polar_from_svd, cfg), primals, tangents)
