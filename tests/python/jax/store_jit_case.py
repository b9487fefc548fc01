"""muster_jax.distributed.solve inside jax.jit against the eager form, in
one process of a jax.distributed job on the CPU (store_worker.py "jit";
test_store_jit.py starts the job).

The engine is the test provider colllapack (tests/providers/
testprov_colllapack.c, through MUSTER_PROVIDER_PATH): every rank's piece
gathered, all of A solved with LAPACKE, this rank's piece of V written
back, so a piece read or written in the wrong layout shows in the
residuals.  Each case, on fresh random matrices (the same on every
process), eagerly and inside jit: potrs and getrs residuals under
20 n eps, syevd's eigenvalues and this process's piece of V against
numpy's; jit and eager agree; a second call of each jitted function on new
inputs does not trace again.  Then a not positive definite A: the eager
ValueError, and inside jit a JaxRuntimeError carrying its message.  Then
gels, geqrf, gesvd and polar (routinecase.py), eagerly and (2 and 3
processes) inside jit against eager, and their refusals both ways.
"""
import os

import jax
import numpy as np

DTYPES = {"f64": np.float64, "c128": np.complex128}
ENGINE = "colllapack"


class Jitted:
    """muster_jax.distributed with solve() called inside jax.jit (one
    compiled function per routine and keywords), its result waited for
    (an error surfaces in the call), for storecase's and routinecase's
    cases."""

    def __init__(self, md):
        self.md, self.mesh_grid, self.compiled = md, md.mesh_grid, {}

    def solve(self, routine, a, b=None, **kw):
        key = (routine, b is None, repr(sorted(kw.items(), key=lambda i: i[0])))
        if key not in self.compiled:
            self.compiled[key] = jax.jit(lambda a, *b: self.md.solve(routine, a, *b, **kw))
        try:
            return jax.block_until_ready(self.compiled[key](a, *(() if b is None else (b,))))
        except jax.errors.JaxRuntimeError:
            self.md.clear_failure()  # else jax.distributed.shutdown() at exit raises it again
            raise


class AgainstEager(Jitted):
    """Jitted, each call made eagerly too on the same inputs: the same
    shapes and dtypes, and the same values where the routine's answer is
    unique (gels' X, gesvd's S, polar's U_p and H: routinecase's A is
    random, so of full rank); the jitted result is returned."""
    UNIQUE = {"gels": lambda out: (out,), "gesvd": lambda out: (out[1],) if isinstance(out, tuple) else (out,),
              "polar": lambda out: out}

    def solve(self, routine, a, b=None, **kw):
        got = super().solve(routine, a, b, **kw)
        want = self.md.solve(routine, a, *(() if b is None else (b,)), **kw)
        shapes = [jax.tree.map(lambda x: (np.shape(x), np.asarray(x).dtype), r) for r in (got, want)]
        assert shapes[0] == shapes[1], (routine, kw.get("m"), kw["n"], "jit != eager", shapes)
        tol = 60 * max(kw["n"], kw.get("m") or 0) * np.finfo(np.float64).eps
        for g, w in zip(self.UNIQUE.get(routine, lambda out: ())(got), self.UNIQUE.get(routine, lambda out: ())(want)):
            err = np.abs(np.asarray(g) - w).max() / np.abs(w).max()
            assert err <= tol, (routine, kw.get("m"), kw["n"], "jit != eager", err, tol)
        return got


def _fresh(rng, shape, dtype):
    x = rng.standard_normal(shape)
    return (x + 1j * rng.standard_normal(shape)).astype(dtype) if np.dtype(dtype).kind == "c" else x


def _pieces(md, me: int, nproc: int, n: int):
    """(name, grid, (rows, cols) of this process's piece): column blocks
    without grid, a 1-D column mesh and a rows mesh (2-D pieces); on 4
    processes a 2 x 2 mesh only."""
    k = -(-n // nproc)
    meshes = [("grid cols", ("x",), (nproc,), (None, "x")), ("grid rows", ("x",), (nproc,), ("x", None))]
    if nproc == 4:  # only a 2-D mesh, 2 x 2 blocks: 2 and 3 processes run the others
        meshes = [("grid 2x2", ("pr", "pc"), (2, 2), ("pr", "pc"))]
    else:
        yield "columns", None, (slice(0, n), slice(k * me, min(n, k * me + k)))
    for name, axes, sizes, spec in meshes:
        g = md.mesh_grid(axes, sizes, list(range(nproc)), spec, n)
        (r0, nr), (c0, nc) = g["procs"][me]["rows"], g["procs"][me]["cols"]
        yield name, g, (slice(r0, r0 + nr), slice(c0, c0 + nc))


def _check_x(a, b, x, tol, what):
    x = np.asarray(x)
    r = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
    assert x.shape == b.shape and x.dtype == b.dtype and r < tol, (what, x.shape, x.dtype, r, tol)


def _check_eig(spd, cut, w, v, tol, what):
    """w: all eigenvalues; v: this piece of V, each column against numpy's
    up to its phase (read from the piece itself)."""
    w, v = np.asarray(w), np.asarray(v)
    w_ref, v_ref = np.linalg.eigh(spd)
    assert np.abs(w - w_ref).max() < tol * np.abs(w_ref).max(), (what, "eigenvalues")
    ref = v_ref[cut]
    dots = np.sum(ref.conj() * v, axis=0)
    phase = dots / np.maximum(np.abs(dots), 1e-300)
    err = np.abs(v - ref * phase).max()
    assert v.dtype == spd.dtype and err < 1e3 * tol, (what, "vectors", err)


def _one(md, s, rng, dtype, name, grid, cut, n):
    """potrs, getrs and syevd, eager and jitted, twice on fresh matrices;
    the jitted functions traced once."""
    traces, tol = [], 20 * n * np.finfo(np.float64).eps
    kw = dict(n=n, store=s, provider=ENGINE, dtype=dtype, grid=grid)

    def f(routine, a, *b):
        traces.append(routine)
        return md.solve(routine, a, *b, **kw)

    jitted = {r: jax.jit(lambda a, *b, r=r: f(r, a, *b)) for r in ("potrs", "getrs", "syevd")}
    for call in range(2):
        m = _fresh(rng, (n, n), DTYPES[dtype])
        spd, gen, b = m @ m.conj().T + n * np.eye(n), m + n * np.eye(n), _fresh(rng, (n, 3), DTYPES[dtype])
        for routine, a in (("potrs", spd), ("getrs", gen)):
            x, xj = md.solve(routine, a[cut], b, **kw), jitted[routine](a[cut], b)
            _check_x(a, b, x, tol, (name, dtype, routine, "eager", call))
            _check_x(a, b, xj, tol, (name, dtype, routine, "jit", call))
            assert np.abs(np.asarray(xj) - x).max() <= tol * np.abs(x).max(), (name, dtype, routine, "jit != eager")
        _check_eig(spd, cut, *md.solve("syevd", spd[cut], **kw), tol, (name, dtype, "syevd eager", call))
        _check_eig(spd, cut, *jitted["syevd"](spd[cut]), tol, (name, dtype, "syevd jit", call))
    assert traces == ["potrs", "getrs", "syevd"], traces  # the second calls reused the compiled functions


def _error_text(fn):
    """(type name, text, the exception) of what fn raised; (None, "ran", None)."""
    try:
        jax.block_until_ready(fn())
    except Exception as e:  # noqa: BLE001 - what jit raises is what is checked
        return type(e).__name__, str(e), e
    return None, "ran", None


def failing_case(md, s, n: int, say):
    """A = -I: potrs fails at leading minor 1 (the engine's info), eagerly
    with a CallError (a ValueError: code, name, kind, info), inside jit
    with a JaxRuntimeError carrying its text;
    the set stays usable, also from a solve inside a larger compiled step."""
    k = -(-n // s.size)
    cols = slice(k * s.rank, min(n, k * s.rank + k))
    a, b = -np.eye(n)[:, cols], np.ones((n, 2))
    eager = _error_text(lambda: md.solve("potrs", a, b, n=n, store=s, provider=ENGINE))
    jitted = _error_text(lambda: jax.jit(lambda a, b: md.solve("potrs", a, b, n=n, store=s, provider=ENGINE))(a, b))
    assert eager[0] == "CallError" and "not positive definite (leading minor 1)" in eager[1], eager
    assert (eager[2].name, eager[2].kind, eager[2].info) == ("MUSTER_ENOTPD", "numerical", 1), eager
    assert jitted[0] == "JaxRuntimeError" and eager[1] in jitted[1], (eager, jitted)
    say("failing solve:", jitted[0], jitted[1].splitlines()[0][:300])
    x = Jitted(md).solve("potrs", -a, b, n=n, store=s, provider=ENGINE)
    assert np.allclose(x, b), x
    step = jax.jit(lambda a, b: 2 * md.solve("potrs", -a, b, n=n, store=s, provider=ENGINE) + b)
    assert np.allclose(step(a, b), 3 * b), "a solve inside a larger compiled step"


def jit_case(md, me: int, nproc: int, say, seed: int, n: int = 13):
    """Every case above on one set, then a jitted solve whose set was closed."""
    rng = np.random.default_rng(seed)  # the same draws on every process: one global A
    with md.store_set(timeout=20) as s:
        for dtype in DTYPES:
            for name, grid, cut in _pieces(md, me, nproc, n):
                _one(md, s, rng, dtype, name, grid, cut, n)
        say("jit == eager, residuals ok")
        failing_case(md, s, n, say)
        k = -(-n // nproc)
        late = jax.jit(lambda a, b: md.solve("potrs", a, b, n=n, store=s, provider=ENGINE))
        a, b = np.eye(n)[:, k * me:k * me + k], np.ones((n, 2))
        late(a, b)
    closed = _error_text(lambda: late(a, b))  # the set's id is forgotten: no dangling comm
    assert closed[0] == "JaxRuntimeError" and "store set of this compiled solve" in closed[1], closed
    assert "is closed" in closed[1], closed
    retrace = _error_text(lambda: jax.jit(lambda a, b: md.solve("potrs", a, b, n=n, store=s))(a, b))
    assert retrace[0] == "ValueError" and "is closed" in retrace[1], retrace  # refused when tracing
    say("closed:", closed[1][:200])
    routines(md, me, say, rng)
    say("jit ok")


def routines(md, me: int, say, rng):
    """gels, geqrf, gesvd, polar eagerly (routinecase.py, on the same
    engine), their hostile arguments; the same inside
    jit, against eager where the answer is unique (AgainstEager), and the
    hostile ones inside jit (refused when tracing, or by the runtime as
    eagerly: then a JaxRuntimeError carrying its message)."""
    import routinecase
    kw_of = lambda dtype: dict(dtype=dtype, provider=ENGINE)  # noqa: E731
    with md.store_set(timeout=20) as s:
        routinecase.routines_case(md, s, say, lambda x: x, np.asarray, rng, kw_of=kw_of)
        # inside jax.jit too, on 4 processes as well: the GPU runs' layout (8 s more)
        routinecase.routines_case(AgainstEager(md), s, lambda *w: say("jitted:", *w), lambda x: x, np.asarray,
                                  rng, kw_of=kw_of)
        # no provider=: rank 0's choice, which on one node weighs the one-node engines too (lapack here)
        routinecase.routines_case(md, s, say, lambda x: x, np.asarray, rng, sizes=((13, 7),),
                                  kw_of=lambda dtype: dict(dtype=dtype))
        say("routines by the default choice ran on", s.last["provider"])
    open_set = lambda: md.store_set(timeout=20)  # noqa: E731
    routinecase.hostile_routines(md, open_set, me, say, lambda x: x, dict(provider=ENGINE))
    routinecase.hostile_routines(Jitted(md), open_set, me, lambda *w: say("jitted:", *w), lambda x: x,
                                 dict(provider=ENGINE), late=(jax.errors.JaxRuntimeError,))
