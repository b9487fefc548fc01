"""Dense linear algebra on column blocks, inside shard_map: what the
derivative rules are written in.

Every function here runs on one device inside shard_map.  A matrix of
(padded) order Np is held as this device's column block, Np x w with
w = Np / R (device r holds columns [r*w, (r+1)*w)); a right-hand side or
solution is held whole on every device (replicated), Np x m.  Only the
leading n x n part is the matrix: the padding rows and columns are zero.

Nothing here gathers a whole matrix on one device: products move one
column block at a time around a ring (ppermute), the Hermitian part moves
each block once (all_to_all), and the solves with the Cholesky factor move
one w x m block per step.  Every collective has a transpose in JAX, so the
reverse mode of a rule built from these runs distributed too.
"""
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.lax import linalg as lax_linalg


class Axis(NamedTuple):
    """The mesh axis (or axes) the columns are spread over."""
    name: str | tuple   # as shard_map and the collectives take it
    size: int           # R, devices along it
    n: int              # order of the matrix (the buffers may be larger: padding)


def rank(ax: Axis) -> jax.Array:
    """This device's position along ax (traced)."""
    return jax.lax.axis_index(ax.name)


def _width(x_loc: jax.Array) -> int:
    return x_loc.shape[-1]


def _rows(x: jax.Array, k: jax.Array, w: int) -> jax.Array:
    """Rows [k*w, (k+1)*w) of x (k traced)."""
    return jax.lax.dynamic_slice_in_dim(x, k * w, w, axis=0)


def _adjoint(x: jax.Array) -> jax.Array:
    return jnp.conj(x).T if jnp.iscomplexobj(x) else x.T


def global_cols(ax: Axis, w: int) -> jax.Array:
    """The global column index of each column of this device's block."""
    return rank(ax) * w + jnp.arange(w)


def valid_mask(x_loc: jax.Array, ax: Axis) -> jax.Array:
    """True where this block holds an entry of the n x n matrix (not padding)."""
    rows = jnp.arange(x_loc.shape[0])[:, None]
    cols = global_cols(ax, _width(x_loc))[None, :]
    return (rows < ax.n) & (cols < ax.n)


# ---- products --------------------------------------------------------------------


def matvec(a_loc: jax.Array, v: jax.Array, ax: Axis) -> jax.Array:
    """A v for a replicated v (Np x m): every device adds its columns' share."""
    w = _width(a_loc)
    return jax.lax.psum(a_loc @ _rows(v, rank(ax), w), ax.name)


def rmatvec(a_loc: jax.Array, v: jax.Array, ax: Axis) -> jax.Array:
    """A^H v for a replicated v: row block r of the result is this block's A^H v."""
    return jax.lax.all_gather(_adjoint(a_loc) @ v, ax.name, axis=0, tiled=True)


def herm_matvec(a_loc: jax.Array, v: jax.Array, ax: Axis) -> jax.Array:
    """((A + A^H) / 2) v: the Hermitian part of A times a replicated v."""
    return (matvec(a_loc, v, ax) + rmatvec(a_loc, v, ax)) / 2


def herm(d_loc: jax.Array, ax: Axis) -> jax.Array:
    """This device's column block of (D + D^H) / 2.

    all_to_all hands device r the row block D[rows_r, :]; its conjugate
    transpose is column block r of D^H.
    """
    row_block = jax.lax.all_to_all(d_loc, ax.name, 0, 1, tiled=True)
    return (d_loc + _adjoint(row_block)) / 2


def _ring(x_loc: jax.Array, ax: Axis, step):
    """Visit every device's column block of X: step(blk, k) is called with
    X[:, cols_k] for k = r, r+1, ... (mod R), one ppermute per move."""
    blk = x_loc
    perm = [(i, (i - 1) % ax.size) for i in range(ax.size)]
    for s in range(ax.size):
        step(blk, (rank(ax) + s) % ax.size)
        if s + 1 < ax.size:
            blk = jax.lax.ppermute(blk, ax.name, perm)


def matmul(x_loc: jax.Array, y_loc: jax.Array, ax: Axis) -> jax.Array:
    """This device's column block of X Y: sum over k of X[:, cols_k] Y[cols_k, cols_r]."""
    w = _width(x_loc)
    out = [jnp.zeros((x_loc.shape[0], _width(y_loc)), jnp.result_type(x_loc, y_loc))]

    def step(blk, k):
        out[0] = out[0] + blk @ _rows(y_loc, k, w)

    _ring(x_loc, ax, step)
    return out[0]


def hmatmul(x_loc: jax.Array, y_loc: jax.Array, ax: Axis) -> jax.Array:
    """This device's column block of X^H Y: its rows cols_k are X[:, cols_k]^H Y[:, cols_r]."""
    w = _width(x_loc)
    out = [jnp.zeros((x_loc.shape[1] * ax.size, _width(y_loc)), jnp.result_type(x_loc, y_loc))]

    def step(blk, k):
        out[0] = jax.lax.dynamic_update_slice_in_dim(out[0], _adjoint(blk) @ y_loc, k * w, axis=0)

    _ring(x_loc, ax, step)
    return out[0]


def diagonal(x_loc: jax.Array, ax: Axis) -> jax.Array:
    """The diagonal of X (Np,), on every device."""
    w = _width(x_loc)
    mine = jnp.diagonal(_rows(x_loc, rank(ax), w))
    return jax.lax.all_gather(mine, ax.name, axis=0, tiled=True)


def trace_product(x_loc: jax.Array, y_loc: jax.Array, ax: Axis) -> jax.Array:
    """tr(X^H Y) = sum of conj(X) * Y over every entry, on every device."""
    return jax.lax.psum(jnp.sum(jnp.conj(x_loc) * y_loc), ax.name)


# ---- solves with the Cholesky factor ------------------------------------------------------


def lower_factor(l_loc: jax.Array, ax: Axis) -> jax.Array:
    """The Cholesky factor L as the solves read it: its lower triangle
    (potrs leaves A's upper triangle above it), with ones on the padding
    diagonal so the padded system stays solvable (its rows are zero)."""
    rows = jnp.arange(l_loc.shape[0])[:, None]
    cols = global_cols(ax, _width(l_loc))[None, :]
    keep = (rows >= cols) & valid_mask(l_loc, ax)
    eye = (rows == cols).astype(l_loc.dtype)
    return jnp.where(keep, l_loc, eye)


def _broadcast_from(x: jax.Array, src: int, ax: Axis) -> jax.Array:
    """Device src's x on every device."""
    return jax.lax.psum(jnp.where(rank(ax) == src, x, jnp.zeros_like(x)), ax.name)


def _diag_block(lm: jax.Array, j: int, ax: Axis) -> jax.Array:
    """Diagonal block j of L on device j; the identity elsewhere.  Every
    device runs the same triangular_solve (only device j's result is kept):
    the identity keeps the others' solves finite, also in the transpose,
    where a zero block would turn the discarded cotangent into NaN."""
    w = _width(lm)
    return jnp.where(rank(ax) == j, lm[j * w:(j + 1) * w], jnp.eye(w, dtype=lm.dtype))


def _forward(lm: jax.Array, r: jax.Array, ax: Axis) -> jax.Array:
    """Y with L Y = r, by block forward substitution: device j solves with
    its diagonal block when the updates of blocks < j have arrived, hands
    Y_j to everyone, and keeps L[:, cols_j] Y_j as its own update."""
    w = _width(lm)
    y = jnp.zeros_like(r)
    mine = jnp.zeros_like(r)  # this device's L[:, cols_me] Y_me, once known
    for j in range(ax.size):
        rows = slice(j * w, (j + 1) * w)
        # nothing to add before block 0 (and XLA's CPU compiler fails on an
        # all-reduce of a complex zero constant)
        s = jax.lax.psum(mine[rows], ax.name) if j else 0
        cand = lax_linalg.triangular_solve(_diag_block(lm, j, ax), r[rows] - s, left_side=True, lower=True)
        yj = _broadcast_from(cand, j, ax)
        y = y.at[rows].set(yj)
        mine = jnp.where(rank(ax) == j, lm @ yj, mine)
    return y


def _backward(lm: jax.Array, y: jax.Array, ax: Axis) -> jax.Array:
    """Z with L^H Z = y, by block back substitution: device j holds
    L[:, cols_j], so it forms L[rows_>j, cols_j]^H Z_>j itself."""
    w = _width(lm)
    z = jnp.zeros_like(y)
    for j in reversed(range(ax.size)):
        rows = slice(j * w, (j + 1) * w)
        t = _adjoint(lm) @ z  # rows of blocks <= j of z are still zero
        cand = lax_linalg.triangular_solve(_diag_block(lm, j, ax), y[rows] - t, left_side=True, lower=True,
                                           transpose_a=True, conjugate_a=True)
        z = z.at[rows].set(_broadcast_from(cand, j, ax))
    return z


def factor_solve(lm: jax.Array, r: jax.Array, ax: Axis) -> jax.Array:
    """A^-1 r = L^-H L^-1 r for a replicated r, with lm = lower_factor(L)."""
    return _backward(lm, _forward(lm, r, ax), ax)


def cho_solve(a_loc: jax.Array, l_loc: jax.Array, r: jax.Array, ax: Axis) -> jax.Array:
    """A^-1 r with the factor L of A that potrs computed (no new factorization).

    Differentiable in A and r to any order, forward and reverse: a
    lax.custom_linear_solve whose matvec is the Hermitian part of A (its
    derivative in A) and whose solve uses L, so the derivative
    A^-1 (dr - dA_h A^-1 r) and the transposed solve both reuse L.  A is
    symmetric as a real-linear map once a complex system is written on
    (real, imaginary) pairs, so the transpose is the solve itself and JAX
    never has to transpose the solve's collectives inside shard_map (which
    it cannot do correctly without knowing what is replicated).

    Args:
      a_loc: this device's column block of A.
      l_loc: this device's column block of A's Cholesky factor (lower).
      r: the right-hand sides, Np x m, replicated.
      ax: the axis the columns are spread over.

    Returns:
      A^-1 r, Np x m, replicated.
    """
    lm = lower_factor(jax.lax.stop_gradient(l_loc), ax)

    def solve(rhs):
        # JAX's reverse mode hands a replicated value's cotangent to the
        # transposed solve as per-device shares that sum to it (shard_map
        # without replication checks); the mean of the sum is the same
        # value on every device in either case.
        return factor_solve(lm, jax.lax.pmean(rhs, ax.name), ax)

    if not jnp.iscomplexobj(a_loc):
        return jax.lax.custom_linear_solve(lambda v: herm_matvec(a_loc, v, ax), r,
                                           lambda _, rhs: solve(rhs), symmetric=True)

    def as_pair(z):
        return jnp.real(z), jnp.imag(z)

    def of_pair(p):
        return jax.lax.complex(p[0], p[1])

    x = jax.lax.custom_linear_solve(lambda p: as_pair(herm_matvec(a_loc, of_pair(p), ax)), as_pair(r),
                                    lambda _, p: as_pair(solve(of_pair(p))), symmetric=True)
    return of_pair(x)
