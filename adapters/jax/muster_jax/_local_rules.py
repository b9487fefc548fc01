"""Derivatives of the solves called inside the caller's shard_map (the
*_shardmap_ctx forms): potrs, getrs and gels on this device's column block
of A, B and X replicated.

The rules are those of _cholesky_rules and _general_rules, written with
the products of a column-blocked A inside shard_map (psum of the blocks'
products; all_gather of A^H's rows; all_to_all for A^T's column blocks):

  potrs  dX = A^-1 (dB - herm(dA) X)
  getrs  dX = A^-1 (dB - dA X)
  gels   dX = (A^H A)^-1 (A^H (dB - dA X) + dA^H (B - A X))

Every derivative solve is one more handler call (a factorization: the
block form keeps no factor), the solve of a lax.custom_linear_solve whose
matvec carries the derivative in A, so JAX transposes the rules for reverse
mode and nests them for higher orders.

Reverse mode under shard_map(check_vma=False): JAX hands each device a
share of a replicated value's cotangent (shares that sum to it, not
necessarily equal), and a collective solve reads one B for every rank; so
each solve first makes its right-hand side the mean of the shares over the
devices (psum / R): equal shares, the same sum, and nothing changes for
the equal right-hand sides of the forward pass.
"""
from functools import partial

import jax
import jax.numpy as jnp

from . import _algebra, _call, _groups
from ._call import GETRS, NO_FACTOR, POTRS


class Local:
    """A's column block on this device and the products of A it makes
    (axis: the mesh axis or axes; n: A's columns; m: its rows)."""

    def __init__(self, a_loc: jax.Array, axis, n: int):
        self.axis, self.n, self.m = axis, n, a_loc.shape[0]
        self.R, self.w = _groups.axis_size(axis), a_loc.shape[1]
        self.me = jax.lax.axis_index(axis)
        cols = self.me * self.w + jnp.arange(self.w)
        self.a = jnp.where((cols < n)[None, :], a_loc, 0)  # columns past n are not A's

    def cols(self, v: jax.Array) -> jax.Array:
        """The rows of a replicated v (n x k) that meet this block's columns."""
        v = jnp.pad(v, ((0, self.R * self.w - v.shape[0]), (0, 0)))
        return jax.lax.dynamic_slice_in_dim(v, self.me * self.w, self.w, axis=0)

    def mv(self, v: jax.Array, a: jax.Array | None = None) -> jax.Array:
        """A v (m x k), replicated; a: another matrix blocked like A."""
        return jax.lax.psum((self.a if a is None else a) @ self.cols(v), self.axis)

    def rmv(self, u: jax.Array, a: jax.Array | None = None) -> jax.Array:
        """A^H u (n x k), replicated."""
        part = _algebra.adjoint(self.a if a is None else a) @ u
        return jax.lax.all_gather(part, self.axis, axis=0, tiled=True)[:self.n]

    def transposed_block(self, a: jax.Array) -> jax.Array:
        """This device's column block of A^T (square A): its rows of A,
        gathered from every block."""
        rows = jnp.pad(a, ((0, self.R * self.w - self.m), (0, 0)))
        mine = jax.lax.all_to_all(rows, self.axis, split_axis=0, concat_axis=1, tiled=True)  # w x R*w
        return mine.T[:self.m]

    def gram_block(self, a: jax.Array) -> jax.Array:
        """This device's column block of A^H A (n x w): all of A meets it."""
        whole = jax.lax.all_gather(a, self.axis, axis=1, tiled=True)[:, :self.n]
        return _algebra.adjoint(whole) @ a

    def mean(self, r: jax.Array) -> jax.Array:
        return jax.lax.psum(r, self.axis) / self.R


def _call_solve(routine: int, a_loc, b, axis, n, T_A, provider, return_status, site):
    _, x, status = _call.local_solve(routine, a_loc, b, axis_name=axis, n=n, T_A=T_A, flags=NO_FACTOR,
                                     provider=provider, return_status=return_status, site=site)
    return x[:n], status


@partial(jax.custom_jvp, nondiff_argnums=(0, 3, 4, 5, 6, 7))
def solve(routine: int, a_loc: jax.Array, b: jax.Array, axis, n: int, T_A, provider, return_status):
    """(X, status) of potrs, getrs or gels from inside shard_map.

    Args:
      routine: POTRS, GETRS or GELS.
      a_loc: this device's column block of A (rows: A's; gels m >= n).
      b: all of B, replicated.
      axis: the mesh axis (or tuple of axes) A's columns are spread over.
      n: A's order (gels: its columns).
      T_A, provider, return_status: as _call.local_solve takes them.

    Returns:
      (X (n x nrhs) replicated, status int32[1]).
    """
    return _call_solve(routine, a_loc, b, axis, n, T_A, provider, return_status, None)


@solve.defjvp
def _solve_jvp(routine, axis, n, T_A, provider, return_status, primals, tangents):
    a_loc, b = primals
    da_loc, db = tangents
    x, status = solve(routine, a_loc, b, axis, n, T_A, provider, return_status)  # nests
    loc = Local(a_loc, axis, n)
    da = jnp.where((loc.me * loc.w + jnp.arange(loc.w) < n)[None, :], da_loc, 0)
    kw = dict(axis=axis, n=n, T_A=T_A, provider=provider, return_status=return_status)
    if routine == POTRS:  # dB - herm(dA) X
        r = db - (loc.mv(x, da) + loc.rmv(x, da)) / 2
        dx = _lin_solve(lambda v: (loc.mv(v) + loc.rmv(v)) / 2, r, loc, POTRS, a_loc, None, kw)
    elif routine == GETRS:
        r = db - loc.mv(x, da)
        dx = _lin_solve(loc.mv, r, loc, GETRS, a_loc, loc.transposed_block(loc.a), kw)
    else:
        r = db - loc.mv(x, da)
        rhs = loc.rmv(r) + loc.rmv(b - loc.mv(x), da)
        g = loc.gram_block(loc.a)
        dx = _lin_solve(lambda v: loc.rmv(loc.mv(v)), rhs, loc, POTRS, g, None, kw)
    return (x, status), (dx, _algebra.status_tangent(status))


def _lin_solve(matvec, r, loc: Local, routine: int, a_loc, at_loc, kw: dict) -> jax.Array:
    """M^-1 r for the M of matvec, by the handler's routine on a_loc's
    matrix (stop_gradient'ed: the derivatives in A go through matvec);
    the transposed solve uses at_loc, A^T's block (None: M is Hermitian,
    M^-T r = conj(M^-1 conj r))."""
    a0 = jax.lax.stop_gradient(a_loc)
    at0 = None if at_loc is None else jax.lax.stop_gradient(at_loc)

    def run(a, rhs):
        return _call_solve(routine, a, loc.mean(rhs), site=None, **kw)[0]

    def solve_t(_, rhs):
        if at0 is not None:
            return run(at0, rhs)
        return jnp.conj(run(a0, jnp.conj(rhs))) if jnp.iscomplexobj(rhs) else run(a0, rhs)

    return jax.lax.custom_linear_solve(matvec, r, lambda _, rhs: run(a0, rhs), solve_t)
