"""The matrices of the multi-process benchmark (bench_mp_gpu.py) and its
residual checks.

Every entry is a hash of its global indices and the row's seed, computed on
the device that holds it: any block of A or B comes out the same on any
process at any time, with no transfer, no host copy and no collective.  So
each column (engine) of a row builds its own layout of the same matrix, a
donated A is simply made again before the next call, and the checks make
A's blocks again instead of keeping A.

kinds: "spd" (potrs, syevd): A = S + n I, S_ij = S_ji = u(min(i,j), max(i,j))
in [0, 1): diagonally dominant, hence SPD with eigenvalues in (n - 1, 2 n);
"gen" (getrs): A_ij = 2 u(i, j) - 1 + n [i == j], not symmetric, diagonally
dominant (nonsingular).  B_ik = 2 u'(i, k) - 1.

The checks (ratios as tests/gpu's benchmark writes them: a ratio of 30 or
more, or a NaN, is a wrong answer):
  potrs, getrs   ||A X - B||_F / (||A||_F ||X||_F n eps)
  syevd          on sampled columns j of V: max ||A v_j - w_j v_j|| /
                 (||A||_F n eps), max |V_J^T V_J - I| / (n eps), and
                 |sum w - trace A| / (||A||_F n eps); w ascending.
A X and A V_J are summed from every process's column block of A, made
again in chunks of rows on its device; the pieces of a result (whichever
layout the engine left them in) reach every process through the store
set's allgather.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

WRONG = 30.0  # a ratio at or above this is a wrong answer
_GOLD = 0x9E3779B9
_CHUNK_ELEMS = 1 << 27  # a check's block of A at most 1 GiB in f64


def _mix(h):
    """murmur3's 32-bit finalizer (uint32 arithmetic wraps)."""
    h = h ^ (h >> 16)
    h = h * jnp.uint32(0x85EBCA6B)
    h = h ^ (h >> 13)
    h = h * jnp.uint32(0xC2B2AE35)
    return h ^ (h >> 16)


def _unit(i, j, seed):
    """u(i, j) in [0, 1) with 24 random bits, from uint32 indices."""
    h = _mix(_mix(j ^ seed) ^ (i * jnp.uint32(_GOLD)))
    return (h >> 8).astype(jnp.float64) * (1.0 / (1 << 24))


@partial(jax.jit, static_argnames=("kind", "n", "rows", "cols"))
def _block(r0, c0, seed, *, kind, n, rows, cols):
    i = jax.lax.broadcasted_iota(jnp.uint32, (rows, cols), 0) + r0
    j = jax.lax.broadcasted_iota(jnp.uint32, (rows, cols), 1) + c0
    if kind == "spd":
        a = _unit(jnp.minimum(i, j), jnp.maximum(i, j), seed)
    else:
        a = 2.0 * _unit(i, j, seed) - 1.0
    return a + jnp.where(i == j, jnp.float64(n), 0.0)


def _scalars(device, *vals):
    return [jax.device_put(np.uint32(v & 0xFFFFFFFF), device) for v in vals]


def block(kind: str, n: int, seed: int, r0: int, c0: int, rows: int, cols: int, device) -> jax.Array:
    """A[r0:r0+rows, c0:c0+cols] on `device`."""
    return _block(*_scalars(device, r0, c0, seed), kind=kind, n=n, rows=rows, cols=cols)


def rhs(n: int, nrhs: int, seed: int, r0: int, rows: int, device) -> jax.Array:
    """B[r0:r0+rows, :] (n x nrhs in all) on `device`."""
    return _block(*_scalars(device, r0, 0, seed ^ 0x5BD1E995), kind="gen", n=0, rows=rows, cols=nrhs)


def allsum(store, x: np.ndarray) -> np.ndarray:
    """The sum over the store set's processes of x (same shape everywhere)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    return sum(np.frombuffer(v, np.float64).reshape(x.shape) for v in store.allgather(x.tobytes()))


def gather(store, pieces, n: int, cols) -> np.ndarray:
    """Columns `cols` of an n-row result, whole, on every process.

    pieces: this process's (row slice, column slice, array) pieces of the
    result, as the engine left them (an array's addressable shards, or the
    block solve() returned); overlapping pieces (replicas) are fine.
    Raises ValueError when no process holds some entry."""
    cols = list(cols)
    val, have = np.zeros((n, len(cols))), np.zeros((n, len(cols)), np.uint8)
    for rs, cs, data in pieces:
        c0, c1 = cs.start or 0, cs.stop if cs.stop is not None else n
        mine = [(k, j - c0) for k, j in enumerate(cols) if c0 <= j < c1]
        if mine:
            part = np.asarray(jnp.asarray(data)[:, np.array([lj for _, lj in mine])])
            for (k, _), col in zip(mine, part.T):
                val[rs, k], have[rs, k] = col, 1
    got = store.allgather(val.tobytes() + have.tobytes())
    out, seen = np.zeros_like(val), np.zeros(val.shape, bool)
    for raw in got:
        v = np.frombuffer(raw[:val.nbytes], np.float64).reshape(val.shape)
        h = np.frombuffer(raw[val.nbytes:], np.uint8).reshape(val.shape).astype(bool) & ~seen
        out[h], seen = v[h], seen | h
    if not seen.all():
        raise ValueError(f"no process holds {int((~seen).sum())} entries of the result's columns {cols[:4]}...")
    return out


def _a_times(kind, n, seed, z, me, nproc, device):
    """(A[:, block] @ z[block], ||A[:, block]||_F^2) of this process's column
    block (ceil(n / P) columns), its rows made in chunks on `device`."""
    k = -(-n // nproc)
    c0, cols = k * me, max(0, min(n, k * me + k) - k * me)
    y, sq = np.zeros((n, z.shape[1])), 0.0
    if cols == 0:
        return y, sq
    zb = jax.device_put(z[c0:c0 + cols], device)
    step = max(1, min(n, _CHUNK_ELEMS // cols))
    for r0 in range(0, n, step):
        a = block(kind, n, seed, r0, c0, min(step, n - r0), cols, device)
        y[r0:r0 + a.shape[0]] = np.asarray(a @ zb)
        sq += float(jnp.sum(a * a))
        del a
    return y, sq


def _finite(*xs):
    return all(np.all(np.isfinite(x)) for x in xs)


def check_solve(store, kind, n, seed, nrhs, x_pieces, me, nproc, device) -> dict:
    """potrs / getrs: {"resid": ratio, "ok": bool}."""
    x = gather(store, x_pieces, n, range(nrhs))
    b = np.asarray(rhs(n, nrhs, seed, 0, n, device))
    y, sq = _a_times(kind, n, seed, x, me, nproc, device)
    tot = allsum(store, np.concatenate([y.ravel(), [sq]]))
    ax, norm_a = tot[:-1].reshape(y.shape), np.sqrt(tot[-1])
    eps = np.finfo(np.float64).eps
    ratio = float(np.linalg.norm(ax - b) / (norm_a * max(np.linalg.norm(x), 1e-300) * n * eps))
    return dict(resid=ratio if np.isfinite(ratio) else None, ok=bool(_finite(x) and ratio < WRONG))


def sample_cols(n: int, seed: int) -> list:
    """The eigenvectors a syevd check looks at: the first, the last, the
    middle one and one drawn from the seed."""
    return sorted({0, n - 1, n // 2, int(np.random.default_rng(seed).integers(n))})


def _trace_spd(n, seed, device):
    """trace A of kind "spd": its diagonal, made as block() makes it."""
    i = jax.device_put(np.arange(n, dtype=np.uint32), device)
    return float(jnp.sum(_unit(i, i, jax.device_put(np.uint32(seed), device)) + n))


def check_eig(store, n, seed, w_pieces, v_pieces, me, nproc, device) -> dict:
    """syevd: {"resid": [eigen, orthogonality, trace] ratios, "ok": bool}."""
    cols = sample_cols(n, seed)
    w = gather(store, w_pieces, n, [0])[:, 0]
    v = gather(store, v_pieces, n, cols)
    y, sq = _a_times("spd", n, seed, v, me, nproc, device)
    tot = allsum(store, np.concatenate([y.ravel(), [sq]]))
    av, norm_a = tot[:-1].reshape(y.shape), np.sqrt(tot[-1])
    eps = np.finfo(np.float64).eps
    eig = np.linalg.norm(av - v * w[cols][None, :], axis=0).max() / (norm_a * n * eps)
    orth = np.abs(v.T @ v - np.eye(len(cols))).max() / (n * eps)
    trace = abs(w.sum() - _trace_spd(n, seed, device)) / (norm_a * n * eps)
    ratios = [float(eig), float(orth), float(trace)]
    ok = _finite(w, v) and bool(np.all(np.diff(w) >= 0)) and max(ratios) < WRONG
    return dict(resid=[r if np.isfinite(r) else None for r in ratios], ok=bool(ok))
