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
dominant (nonsingular); "rand" (gesvd, polar; m x n, any m): A_ij =
2 u(i, j) - 1, no shift: a random matrix's spread of singular values (a
condition number of order n when square), not the n I that would make
QDWH converge at once.  B_ik = 2 u'(i, k) - 1.

The checks (ratios as tests/gpu's benchmark writes them: a ratio of 30 or
more, or a NaN, is a wrong answer):
  potrs, getrs   ||A X - B||_F / (||A||_F ||X||_F n eps)
  syevd          on sampled columns j of V: max ||A v_j - w_j v_j|| /
                 (||A||_F n eps), max |V_J^T V_J - I| / (n eps), and
                 |sum w - trace A| / (||A||_F n eps); w ascending.
  gesvd          (m x n, k = min(m, n), N = max(m, n); thin U, S, V^H)
                 on sampled columns J of A: ||A_J - U S (V^H)_J||_F /
                 (||A||_F N eps); on sampled indices K: max |U_K^T U_K - I|
                 and max |V_K^T V_K - I| / (N eps); |sum s^2 - ||A||_F^2| /
                 (||A||_F^2 N eps); s descending, >= 0.
  polar          (A = U_p H) ||A_J - U_p H_J||_F / (||A||_F N eps), max
                 |U_J^T U_J - I| / (N eps), max |H_J - (H^T)_J| /
                 (||A||_F N eps), and H_JJ positive semidefinite (its least
                 eigenvalue above -30 ||A||_F N eps: a sign flipped
                 U_p, H passes the other three).
A X and A V_J are summed from every process's column block of A, made
again in chunks of rows on its device (||A||_F likewise; A_J is made
whole by each process); U S (V^H)_J and U_p H_J from every process's
pieces of U or U_p (times(): each entry counted once, replicas or not);
the pieces of a result (whichever layout the engine left them in) reach
every process through the store set's allgather.
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
    return a if kind == "rand" else a + jnp.where(i == j, jnp.float64(n), 0.0)


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


def gather(store, pieces, n: int, cols, width: int | None = None) -> np.ndarray:
    """Columns `cols` of an n-row result (width columns, default n), whole,
    on every process.

    pieces: this process's (row slice, column slice, array) pieces of the
    result, as the engine left them (an array's addressable shards, or the
    block solve() returned); overlapping pieces (replicas) are fine.
    Raises ValueError when no process holds some entry."""
    cols = list(cols)
    val, have = np.zeros((n, len(cols))), np.zeros((n, len(cols)), np.uint8)
    for rs, cs, data in pieces:
        c0, c1 = cs.start or 0, cs.stop if cs.stop is not None else (n if width is None else width)
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


# ------------------------------------------------- gesvd and polar (m x n)
_MAX_PIECES = 32  # a process's pieces of one result (jax's addressable shards: one or a few)


def transposed(pieces) -> list:
    """The pieces of M^T from those of M (rows of M read as columns)."""
    return [(cs, rs, data.T) for rs, cs, data in pieces]


def _rect(rs, cs, m, k):
    return (rs.start or 0, m if rs.stop is None else rs.stop, cs.start or 0, k if cs.stop is None else cs.stop)


def times(store, pieces, m: int, k: int, z: np.ndarray, me: int) -> np.ndarray:
    """M z on every process, M an m x k result held in pieces (gather()'s),
    z (k x c) the same on every process.

    Each entry of M is counted once however many processes hold it: the
    pieces' corners reach every process, cut M into cells, and each cell
    is multiplied by the first process (in rank order) and piece holding
    it, on that piece's device; the sums meet over the store set.  Raises
    ValueError (on every process alike) when no process holds some entry."""
    mine = [_rect(rs, cs, m, k) for rs, cs, _ in pieces]
    if len(mine) > _MAX_PIECES:
        raise ValueError(f"{len(mine)} pieces of one result on process {me}: at most {_MAX_PIECES}")
    buf = np.full((_MAX_PIECES, 4), -1, np.int64)
    buf[:len(mine)] = mine
    rects = [(p, i, tuple(int(v) for v in r)) for p, raw in enumerate(store.allgather(buf.tobytes()))
             for i, r in enumerate(np.frombuffer(raw, np.int64).reshape(-1, 4)) if r[0] >= 0]
    rows = sorted({0, m} | {r[0] for *_, r in rects} | {r[1] for *_, r in rects})
    cols = sorted({0, k} | {r[2] for *_, r in rects} | {r[3] for *_, r in rects})
    y, missing = np.zeros((m, z.shape[1])), 0
    for r0, r1 in zip(rows, rows[1:]):
        for c0, c1 in zip(cols, cols[1:]):
            if r1 > m or c1 > k:
                continue
            owner = next(((p, i, r) for p, i, r in rects if r[0] <= r0 and r1 <= r[1] and r[2] <= c0 and c1 <= r[3]),
                         None)
            if owner is None:
                missing += (r1 - r0) * (c1 - c0)
            elif owner[0] == me:
                (pr0, _, pc0, _), data = owner[2], pieces[owner[1]][2]
                blk = data[r0 - pr0:r1 - pr0, c0 - pc0:c1 - pc0]
                zb = z[c0:c1]
                if isinstance(blk, jax.Array):
                    zb = jax.device_put(zb, next(iter(blk.devices())))
                y[r0:r1] += np.asarray(blk @ zb)
    if missing:
        raise ValueError(f"no process holds {missing} entries of the {m} x {k} result")
    return allsum(store, y)


def columns_of(kind: str, m: int, n: int, seed: int, cols, device) -> np.ndarray:
    """A[:, cols] (m rows), made whole by this process."""
    return np.concatenate([np.asarray(block(kind, n, seed, 0, j, m, 1, device)) for j in cols], axis=1)


def frob2(store, kind: str, m: int, n: int, seed: int, me: int, nproc: int, device) -> float:
    """||A||_F^2 of the m x n A: each process's column block, made in
    chunks of rows on its device, summed over the store set."""
    k = -(-n // nproc)
    c0, cols = k * me, max(0, min(n, k * me + k) - k * me)
    sq, step = 0.0, max(1, min(m, _CHUNK_ELEMS // max(cols, 1)))
    for r0 in range(0, m if cols else 0, step):
        a = block(kind, n, seed, r0, c0, min(step, m - r0), cols, device)
        sq += float(jnp.sum(a * a))
        del a
    return float(allsum(store, np.array([sq]))[0])


def _orth(q, big) -> float:
    return float(np.abs(q.conj().T @ q - np.eye(q.shape[1])).max() / (big * np.finfo(np.float64).eps))


def _verdict(ratios, ok) -> dict:
    return dict(resid=[r if np.isfinite(r) else None for r in ratios],
                ok=bool(ok and all(np.isfinite(r) and r < WRONG for r in ratios)))


def check_svd(store, kind, m, n, seed, u_pieces, s_pieces, vh_pieces, me, nproc, device) -> dict:
    """gesvd (thin U, S, V^H of the m x n A): {"resid": [reconstruction,
    U's and V's orthogonality, sum s^2], "ok": bool}."""
    k, big, eps = min(m, n), max(m, n), np.finfo(np.float64).eps
    cols, idx = sample_cols(n, seed), sample_cols(k, seed + 1)
    s = gather(store, s_pieces, k, [0], width=1)[:, 0]
    vh_j = gather(store, vh_pieces, k, cols, width=n)
    usv = times(store, u_pieces, m, k, s[:, None] * vh_j, me)
    u_k = gather(store, u_pieces, m, idx, width=k)
    v_k = gather(store, transposed(vh_pieces), n, idx, width=k)
    norm2 = frob2(store, kind, m, n, seed, me, nproc, device)
    a_j = columns_of(kind, m, n, seed, cols, device)
    ratios = [float(np.linalg.norm(a_j - usv) / (np.sqrt(norm2) * big * eps)), _orth(u_k, big), _orth(v_k, big),
              float(abs(np.sum(s * s) - norm2) / (norm2 * big * eps))]
    order = bool(np.all(np.diff(s) <= 0) and s[-1] >= 0) if _finite(s) else False
    return _verdict(ratios, _finite(s, vh_j, usv, u_k, v_k) and order)


def check_polar(store, kind, m, n, seed, up_pieces, h_pieces, me, nproc, device) -> dict:
    """polar (A = U_p H, A m x n, m >= n): {"resid": [reconstruction, U_p's
    orthogonality, H's symmetry], "ok": bool}, H_JJ positive semidefinite."""
    big, eps = max(m, n), np.finfo(np.float64).eps
    cols = sample_cols(n, seed)
    h_j = gather(store, h_pieces, n, cols)
    h_jt = gather(store, transposed(h_pieces), n, cols)  # rows J of H, as columns
    uh = times(store, up_pieces, m, n, h_j, me)
    u_j = gather(store, up_pieces, m, cols, width=n)
    norm_a = np.sqrt(frob2(store, kind, m, n, seed, me, nproc, device))
    a_j = columns_of(kind, m, n, seed, cols, device)
    ratios = [float(np.linalg.norm(a_j - uh) / (norm_a * big * eps)), _orth(u_j, big),
              float(np.abs(h_j - h_jt).max() / (norm_a * big * eps))]
    good = _finite(h_j, h_jt, uh, u_j)
    if good:
        h_jj = h_j[cols, :]
        good = bool(np.linalg.eigvalsh((h_jj + h_jj.T) / 2).min() >= -WRONG * norm_a * big * eps)
    return _verdict(ratios, good)
