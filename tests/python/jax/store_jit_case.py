"""muster_jax.distributed.solve inside jax.jit against the eager form, in
one process of a jax.distributed job on the CPU (store_worker.py "jit";
test_store_jit.py starts the job).

On the CPU the store path's only engine is the collective test provider
colltwo (MUSTER_PROVIDER_PATH; scalapack needs MPI, cusolvermp a GPU): it
checks its bootstrap and this process's piece against the dist it was
given, writes TP_VERSION = 4 into X (potrs) and W (syevd), leaves A's copy
(syevd's V) as it was, and returns TESTPROV_INFO as info.  So each case
checks: jit == eager bit for bit, X and W all 4, V the piece this process
passed (the layout round trip through the callback), shapes and dtypes
the eager form's; a second call on fresh inputs does not trace again; a
failing solve (info 2: not positive definite) raises the eager message.
"""
import os

import jax
import numpy as np

DTYPES = {"f64": np.float64, "c128": np.complex128}


def _fresh(rng, shape, dtype):
    x = rng.standard_normal(shape)
    return (x + 1j * rng.standard_normal(shape)).astype(dtype) if np.dtype(dtype).kind == "c" else x


def _pieces(md, me: int, nproc: int, n: int):
    """(name, grid, slicer of this process's piece): column blocks without
    grid, a 1-D column mesh, and a rows mesh (2-D pieces, no gather)."""
    k = -(-n // nproc)
    yield "columns", None, lambda a: a[:, k * me:k * me + k]
    for name, spec in (("grid cols", (None, "x")), ("grid rows", ("x", None))):
        g = md.mesh_grid(("x",), (nproc,), list(range(nproc)), spec, n)
        (r0, nr), (c0, nc) = g["procs"][me]["rows"], g["procs"][me]["cols"]
        yield name, g, lambda a, r0=r0, nr=nr, c0=c0, nc=nc: a[r0:r0 + nr, c0:c0 + nc]


def _same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, got.dtype, want.shape, want.dtype)
    assert np.array_equal(got, want), (what, got, want)


def _one(md, s, me, nproc, rng, dtype, name, grid, cut, n):
    """potrs and syevd, eager and jitted, on fresh inputs; the jitted
    function called twice, traced once."""
    traces = []

    def f(routine, a, b):
        traces.append(routine)
        return md.solve(routine, a, b, n=n, store=s, provider="colltwo", dtype=dtype, grid=grid)

    potrs = jax.jit(lambda a, b: f("potrs", a, b))
    syevd = jax.jit(lambda a: f("syevd", a, None))
    for call in range(2):
        a, b = cut(_fresh(rng, (n, n), DTYPES[dtype])), _fresh(rng, (n, 3), DTYPES[dtype])
        x = md.solve("potrs", a, b, n=n, store=s, provider="colltwo", dtype=dtype, grid=grid)
        _same(potrs(a, b), x, (name, dtype, "potrs", call))
        _same(x, np.full((n, 3), 4, DTYPES[dtype]), (name, dtype, "potrs X"))
        w, v = md.solve("syevd", a, n=n, store=s, provider="colltwo", dtype=dtype, grid=grid)
        wj, vj = syevd(a)
        _same(wj, w, (name, dtype, "syevd w", call))
        _same(vj, v, (name, dtype, "syevd v", call))
        _same(w, np.full(n, 4.0), (name, dtype, "syevd W"))
        _same(v, a, (name, dtype, "syevd V: the piece passed"))
    assert traces == ["potrs", "syevd"], traces  # the second call reused the compiled functions


def _error_text(fn):
    try:
        jax.block_until_ready(fn())
    except Exception as e:  # noqa: BLE001 - what jit raises is what is checked
        return type(e).__name__, str(e)
    return None, "ran"


def failing_case(md, s, n: int, say):
    """info 2 from the engine: the eager ValueError, and inside jit a
    JaxRuntimeError carrying the same message; the set stays usable."""
    a, b = np.eye(n), np.ones((n, 2))
    k = -(-n // s.size)
    a = a[:, k * s.rank:k * s.rank + k]
    os.environ["TESTPROV_INFO"] = "2"
    eager = _error_text(lambda: md.solve("potrs", a, b, n=n, store=s, provider="colltwo"))
    jitted = _error_text(lambda: jax.jit(lambda a, b: md.solve("potrs", a, b, n=n, store=s,
                                                             provider="colltwo"))(a, b))
    del os.environ["TESTPROV_INFO"]
    assert eager[0] == "ValueError" and "not positive definite" in eager[1], eager
    assert jitted[0] == "JaxRuntimeError" and eager[1] in jitted[1], (eager, jitted)
    say("failing solve:", jitted[0], jitted[1].splitlines()[0][:300])
    x = jax.jit(lambda a, b: md.solve("potrs", a, b, n=n, store=s, provider="colltwo"))(a, b)
    _same(x, np.full((n, 2), 4.0), "potrs after the failure")


def jit_case(md, me: int, nproc: int, say, seed: int, n: int = 13):
    """Every case above on one set, then a jitted solve whose set was closed."""
    rng = np.random.default_rng(seed)  # the same draws on every process: one global A
    with md.store_set(timeout=20) as s:
        for dtype in DTYPES:
            for name, grid, cut in _pieces(md, me, nproc, n):
                _one(md, s, me, nproc, rng, dtype, name, grid, cut, n)
        say("jit == eager")
        failing_case(md, s, n, say)
        k = -(-n // nproc)
        late = jax.jit(lambda a, b: md.solve("potrs", a, b, n=n, store=s, provider="colltwo"))
        a, b = np.eye(n)[:, k * me:k * me + k], np.ones((n, 2))
        late(a, b)
    closed = _error_text(lambda: late(a, b))
    assert "is closed" in closed[1], closed
    say("jit ok")
