"""solve(..., grid=) with each process's own 2-D piece, the cases a
framework's store worker runs (tests/python/torch/store_worker.py; written
for any adapter: arrays made by put(numpy array), read back by host(array)).

On the CPU no real collective engine runs over a store set: scalapack
needs the MPI bootstrap (kind "mpi") and cusolvermp GPUs.  So the CPU
cases force the collective test provider colltwo (MUSTER_PROVIDER_PATH)
with TESTPROV_SUM=1: every rank adds up A(i, j) * (1 + i n + j) over its
piece, placed by the dist the runtime handed it, and the ranks' sums
(exchanged over the store) come back in every entry of B (potrs, getrs)
or W (syevd), so a piece cut, laid out or placed wrong changes the
answer; colltwo also checks the dist against its rank.  On GPUs
gpu_grid_case solves for real through cusolvermp (residuals).
"""
import numpy as np

DTYPES = (np.float64, np.complex128, np.float32, np.complex64)


def seed(s, say) -> int:
    """A fresh seed, rank 0's, the same on every rank (printed: a failure
    can be replayed)."""
    import os
    v = int.from_bytes(s.allgather(os.urandom(8))[0], "little")
    say("seed", v)
    return v


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def piece_of(a, g, me: int, nproc: int):
    """This process's piece of a: its block of grid g, or (g None) its
    column block of muster's block layout."""
    n = a.shape[0]
    if g is None:
        k = -(-n // nproc)
        return a[:, k * me:k * me + k]
    (r0, nr), (c0, nc) = g["procs"][me]["rows"], g["procs"][me]["cols"]
    return a[r0:r0 + nr, c0:c0 + nc]


def sum_case(md, s, g, me: int, nproc: int, rng, dtype, put, host, n: int):
    """potrs, getrs and syevd of one fresh A (dtype) through colltwo with
    TESTPROV_SUM: X and W equal the weighted sum of the whole A, within the
    dtype's rounding of it plus double's of the sum; syevd's V is the piece
    back, shaped as it (colltwo leaves A alone)."""
    a, b = rand(rng, (n, n), dtype), rand(rng, (n, 2), dtype)
    i, j = np.indices((n, n))
    terms = a.astype(np.complex128) * (1.0 + i * n + j)
    want, scale = terms.sum(), np.abs(terms).sum()
    tol = (np.finfo(dtype).eps + n * n * np.finfo(np.float64).eps) * scale
    piece = piece_of(a, g, me, nproc)
    for routine in ("potrs", "getrs"):
        x = host(md.solve(routine, put(piece), put(b), n=n, store=s, provider="colltwo", grid=g))
        assert x.shape == (n, 2) and x.dtype == dtype, (routine, x.shape, x.dtype)
        exact = want if np.issubdtype(dtype, np.complexfloating) else want.real
        assert np.abs(x - exact).max() <= tol, (routine, dtype, x.ravel()[:2], exact, tol)
    w, v = md.solve("syevd", put(piece), n=n, store=s, provider="colltwo", grid=g)
    w, v = host(w), host(v)
    assert w.shape == (n,) and not np.iscomplexobj(w), (w.shape, w.dtype)
    assert np.abs(w - (want.real + want.imag)).max() <= tol, ("syevd", dtype, w[:2], want, tol)
    assert v.shape == piece.shape and np.array_equal(v, piece), ("syevd piece", v.shape, piece.shape)


def sum_cases(md, s, grids, me: int, nproc: int, rng, put, host, say, n: int, dtypes=DTYPES):
    """sum_case for every grid (None: column blocks without grid=) and dtype."""
    for g in grids:
        for dtype in dtypes:
            sum_case(md, s, g, me, nproc, rng, dtype, put, host, n)
        say("sums ok", "columns" if g is None else f"{g['nprow']} x {g['npcol']}")


def expect_refusal(fn, *wants, name=None):
    """The ValueError fn() raises (assert: it raises one containing every
    `wants`; with name, a CallError whose code is that: "MUSTER_EINVAL")."""
    try:
        fn()
    except ValueError as e:
        assert all(w in str(e) for w in wants), (str(e), wants)
        assert name is None or getattr(e, "name", None) == name, (type(e), getattr(e, "name", None), name)
        return str(e)
    raise AssertionError(f"no ValueError (wanted {wants})")


def hostile_cases(md, open_set, me: int, nproc: int, put, say, n: int = 11):
    """Each on a fresh set (a refusal fails the set for every rank):
    a piece of the wrong shape on one rank (it names the shape wanted, the
    others name that rank, with the code it aborted with: EINVAL); a grid made for another n on every rank; the
    places of the mesh reversed (each rank is another's grid place: the
    rank to take is named, and a set opened with it runs); ranks passing
    grids of different shapes (the runtime's check, the same on every
    rank); B of the wrong shape."""
    rows = md.mesh_grid(("x",), (nproc,), list(range(nproc)), ("x", None), n)
    zeros = np.zeros((n, 2))
    bad = 1 % nproc
    with open_set() as s:
        p = np.zeros((rows["procs"][me]["rows"][1] + (me == bad), n))
        expect_refusal(lambda: md.solve("potrs", put(p), put(zeros), n=n, store=s, provider="colltwo", grid=rows),
                       *(("piece of A is", "it must be") if me == bad else (f"rank {bad}",)),
                       name=None if me == bad else "MUSTER_EINVAL")
    with open_set() as s:
        other = md.mesh_grid(("x",), (nproc,), list(range(nproc)), ("x", None), n + 1)
        piece = np.zeros((other["procs"][me]["rows"][1], n + 1))
        expect_refusal(lambda: md.solve("potrs", put(piece), put(zeros), n=n, store=s, grid=other),
                       f"n={n}, the grid was made for n={n + 1}")
    rev = md.mesh_grid(("x",), (nproc,), list(reversed(range(nproc))), ("x", None), n)
    mine = rev["procs"][me]["rank"]
    piece = np.zeros((rev["procs"][me]["rows"][1], n))
    with open_set() as s:
        if mine != me:  # the middle rank of an odd count keeps its place; it fails as the others abort
            expect_refusal(lambda: md.solve("potrs", put(piece), put(zeros), n=n, store=s, grid=rev),
                           f"rank {mine} of the grid, but is rank {me} of the store set",
                           f"store_set(rank={mine})")
    with open_set(rank=mine) as s:
        x = md.solve("potrs", put(piece), put(zeros), n=n, store=s, provider="colltwo", grid=rev)
        assert np.asarray(x).shape == (n, 2)
    if nproc == 4:  # rank 0 on a 2 x 2 grid, the others on 4 x 1: the runtime compares every rank's dist
        sq = md.mesh_grid(("pr", "pc"), (2, 2), [0, 1, 2, 3], ("pr", "pc"), n)
        g = sq if me == 0 else rows
        with open_set() as s:
            expect_refusal(lambda: md.solve("potrs", put(piece_of(np.zeros((n, n)), g, me, nproc)), put(zeros),
                                            n=n, store=s, provider="colltwo", grid=g),
                           "rank 1's dist is a 4 x 1 grid of 3 x 11 blocks, rank 0's a 2 x 2 grid")
    with open_set() as s:
        expect_refusal(lambda: md.solve("potrs", put(piece_of(np.zeros((n, n)), rows, me, nproc)),
                                        put(np.zeros((n - 1, 2))), n=n, store=s, grid=rows),
                       f"B is {n - 1} x 2, it must be {n} x 2")
    say("hostile ok")


def gather_grid(s, g, v):
    """The whole matrix from every rank's block v of grid g (each rank of
    set s is its grid rank): an allgather of the blocks padded to mb x nb."""
    pad = np.zeros((g["mb"], g["nb"]), dtype=v.dtype)
    pad[:v.shape[0], :v.shape[1]] = v
    parts = s.allgather(pad.tobytes())
    whole = np.zeros((g["n"], g["n"]), dtype=v.dtype)
    for e in g["procs"].values():
        (r0, nr), (c0, nc) = e["rows"], e["cols"]
        block = np.frombuffer(parts[e["rank"]], dtype=v.dtype).reshape(g["mb"], g["nb"])
        whole[r0:r0 + nr, c0:c0 + nc] = block[:nr, :nc]
    return whole


def gpu_grid_case(md, s, me: int, nproc: int, say, put, host, n: int = 1003):
    """On GPUs, through cusolvermp: potrs, getrs and syevd in f64 and c128
    on each rank's block of a 2 x 2 grid (4 ranks, else nproc x 1) and of
    a 1 x nproc one (column blocks through grid=), fresh random A; potrs
    and getrs residuals under 20 n eps, syevd's eigenvalues against
    numpy's, and V (the ranks' blocks gathered) with A V = V diag(w) and
    V^H V = I under 20 n eps.  say()s "grid solves ok" per grid."""
    rng = np.random.default_rng(seed(s, say))
    for pr, pc in ((2, 2) if nproc == 4 else (nproc, 1), (1, nproc)):
        g = md.mesh_grid(("pr", "pc"), (pr, pc), list(range(nproc)), ("pr", "pc"), n)
        for dtype in (np.float64, np.complex128):
            m = rand(rng, (n, n), dtype)
            hpd, gen, b = m @ m.conj().T + n * np.eye(n), m + n * np.eye(n), rand(rng, (n, 3), dtype)
            tol = 20 * n * np.finfo(dtype).eps
            for routine, a in (("potrs", hpd), ("getrs", gen)):
                x = host(md.solve(routine, put(piece_of(a, g, me, nproc)), put(b), n=n, store=s, grid=g))
                r = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
                assert r < tol, (routine, dtype, r, tol)
            w, v = md.solve("syevd", put(piece_of(hpd, g, me, nproc)), n=n, store=s, grid=g)
            w, v = host(w), host(v)
            assert np.abs(w - np.linalg.eigvalsh(hpd)).max() < tol * np.abs(w).max(), ("eigenvalues", dtype)
            assert v.shape == piece_of(hpd, g, me, nproc).shape, v.shape
            vv = gather_grid(s, g, v)
            r = np.linalg.norm(hpd @ vv - vv * w) / np.linalg.norm(hpd)
            assert r < tol, ("syevd vectors", dtype, r, tol)
            assert np.linalg.norm(vv.conj().T @ vv - np.eye(n)) < tol, ("orthonormal", dtype)
        say(f"grid solves ok ({pr} x {pc})")
