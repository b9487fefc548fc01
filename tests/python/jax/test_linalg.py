"""muster_jax.linalg against jax.numpy.linalg / jax.scipy.linalg on 4 host
devices: values on fresh random inputs in every dtype (errors scaled by
dtype, condition number and N), the result types, the triangle read, and
derivatives (check_grads, both modes, step and tolerances from
fdcheck; gradients against jnp's on the same functions)."""
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax.linalg as ml
from jaxtest_util import (DTYPES, check_grads_fd, check_syevd, eigen_conditioning, eps, hermitian, hpd, rhs,
                          solve_conditioning)
from test_general import general

N, M = 6, 9  # N not a multiple of 4: the padded path; least squares M x N
ids = lambda d: np.dtype(d).name  # noqa: E731


def c128(x):
    return np.asarray(x, np.complex128)


def rel(x, ref):
    x, ref = c128(x), c128(ref)
    return np.linalg.norm(x - ref) / max(np.linalg.norm(ref), 1e-300)


def tol(dt, cond, n=N):
    """A backward-stable solve's forward error bound, with room: 30 n eps cond."""
    return 30 * n * eps(dt) * cond


def cond(a):
    return np.linalg.cond(c128(a))


def sym(a):
    return (a + jnp.conj(a).T) / 2


def garbage(rng, n, dt):
    return (100 * rng.standard_normal((n, n))).astype(dt)


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_solve(mesh4, rng, dt):
    a, g, b = hpd(rng, N, dt), general(rng, N, N, dt), rhs(rng, N, 3, dt)
    x = ml.solve(a, b, assume_a="pos")
    assert x.dtype == dt and x.shape == (N, 3)
    assert rel(x, np.linalg.solve(c128(a), c128(b))) < tol(dt, cond(a))
    # the triangle read: the other one is never looked at (jax.scipy's rule)
    up = np.triu(a) + np.tril(garbage(rng, N, dt), -1)
    lo = np.tril(a) + np.triu(garbage(rng, N, dt), 1)
    ref = np.asarray(jsl.solve(c128(a), c128(b[:, 0]), assume_a="pos"))
    for m, lower in ((up, False), (lo, True)):
        x1 = ml.solve(m, b[:, 0], lower=lower, assume_a="pos")
        assert x1.shape == (N,) and rel(x1, ref) < tol(dt, cond(a))
    for assume in ("gen", "sym"):
        xg = ml.solve(g, b, assume_a=assume)
        assert rel(xg, np.linalg.solve(c128(g), c128(b))) < tol(dt, cond(g))
    assert rel(ml.solve(g, b[:, 1]), jnp.linalg.solve(c128(g), c128(b[:, 1]))) < tol(dt, cond(g))


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_cho_factor_solve(mesh4, rng, dt):
    a, b = hpd(rng, N, dt), rhs(rng, N, 2, dt)
    ref = np.linalg.solve(c128(a), c128(b))
    lo = np.tril(a) + np.triu(garbage(rng, N, dt), 1)
    c, lower = ml.cho_factor(lo, lower=True)
    assert lower is True and isinstance(c, ml.CholeskyFactor) and c.shape == (N, N) and c.dtype == dt
    assert rel(ml.cho_solve((c, lower), b), ref) < tol(dt, cond(a))
    x1 = ml.cho_solve(c, b[:, 0])  # the factor alone, a 1-D b
    assert x1.shape == (N,) and rel(x1, ref[:, 0]) < tol(dt, cond(a))
    # the factor crosses jit (a pytree); factor and solve in one program
    assert rel(jax.jit(ml.cho_solve)((c, lower), b), ref) < tol(dt, cond(a))
    both = jax.jit(lambda a, b: ml.cho_solve(ml.cho_factor(a), b))(a, b)
    assert rel(both, np.asarray(jsl.cho_solve(jsl.cho_factor(c128(a)), c128(b)))) < tol(dt, cond(a))


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_eigh_eigvalsh(mesh4, rng, dt):
    a = hermitian(rng, N, dt)
    r = ml.eigh(a)
    assert type(r) is type(jnp.linalg.eigh(jnp.eye(2))) and r._fields == ("eigenvalues", "eigenvectors")
    w, v = r
    err, ascending = check_syevd(a, w, v)
    assert err < 10 and ascending
    wref = np.linalg.eigvalsh(c128(a))
    scale = N * eps(dt) * np.abs(wref).max()
    assert np.abs(np.asarray(ml.eigvalsh(a)) - wref).max() < 30 * scale
    # symmetrize_input=False reads one triangle (UPLO)
    up = np.triu(a) + np.tril(garbage(rng, N, dt), -1)
    assert np.abs(np.asarray(ml.eigvalsh(up, UPLO="U", symmetrize_input=False)) - wref).max() < 30 * scale
    w2, _ = ml.eigh(np.tril(a) + np.triu(garbage(rng, N, dt), 1), symmetrize_input=False)
    assert np.abs(np.asarray(w2) - wref).max() < 30 * scale


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_inv(mesh4, rng, dt):
    a, g = hpd(rng, N, dt), general(rng, N, N, dt)
    ia = ml.inv(np.tril(a) + np.triu(garbage(rng, N, dt), 1), assume_a="pos")  # the lower triangle
    assert ia.shape == (N, N) and ia.dtype == dt
    assert rel(ia, np.linalg.inv(c128(a))) < tol(dt, cond(a))
    assert rel(ml.inv(g), jnp.linalg.inv(c128(g))) < tol(dt, cond(g))


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_lstsq(mesh4, rng, dt):
    t, c = general(rng, M, N, dt), rhs(rng, M, 2, dt)
    x, resid, rank, s = ml.lstsq(t, c)
    xr, residr, rankr, sr = jnp.linalg.lstsq(c128(t), c128(c))
    k = cond(t)
    assert x.shape == (N, 2) and resid.shape == residr.shape and s.shape == sr.shape
    assert rel(x, xr) < tol(dt, k + k * k, M)
    assert np.allclose(np.asarray(resid), np.asarray(residr), rtol=tol(dt, k * k, M), atol=0)
    assert int(rank) == int(rankr) == N
    # s from gesvd: absolute error eps s_max
    assert np.all(np.abs(np.asarray(s) - np.asarray(sr)) <= tol(dt, 1, M) * np.asarray(sr)[0])
    assert np.all(np.diff(np.asarray(s)) <= 0)
    x1, r1, _, _ = jax.block_until_ready(ml.lstsq(t, c[:, 0]))
    x1r, r1r, _, _ = jnp.linalg.lstsq(c128(t), c128(c[:, 0]))
    assert x1.shape == x1r.shape == (N,) and r1.shape == r1r.shape
    sq = general(rng, N, N, dt)
    out = jax.block_until_ready(ml.lstsq(sq, c[:N, 0], numpy_resid=True))  # its solves done before teardown
    assert out[1].shape == (0,)  # NumPy's rule for M == N


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_slogdet(mesh4, rng, dt):
    a, h, g = hpd(rng, N, dt), hermitian(rng, N, dt), general(rng, N, N, dt)
    for m, assume in ((a, "pos"), (h, "her"), (g, "gen")):
        r = ml.slogdet(m, assume_a=assume)
        ref = jnp.linalg.slogdet(c128(m))
        assert type(r) is type(ref) and r._fields == ("sign", "logabsdet")
        assert r.sign.dtype == dt and r.logabsdet.dtype == np.finfo(dt).dtype
        assert abs(complex(r.sign) - complex(ref.sign)) < 1e-3
        assert abs(float(r.logabsdet) - float(ref.logabsdet)) < tol(dt, cond(m))
    assert complex(ml.slogdet(h, assume_a="her").sign) * complex(jnp.linalg.slogdet(c128(h)).sign).conjugate() \
        == pytest.approx(1, abs=1e-3)


def test_sharded_inputs_stay_and_are_read(mesh4, rng):
    """A sharded a: solved over its own mesh and spec (rows or columns), the
    caller's array untouched; mesh= and jax.set_mesh work too."""
    a, b = hpd(rng, 8, np.float64), rhs(rng, 8, 1, np.float64)
    ref = np.linalg.solve(a, b)
    for spec in (P("x", None), P(None, "x")):
        ad = jax.device_put(a, NamedSharding(mesh4, spec))
        assert rel(ml.solve(ad, b, assume_a="pos"), ref) < tol(np.float64, cond(a), 8)
        assert rel(ml.solve(ad, b), ref) < tol(np.float64, cond(a), 8)
        assert np.all(np.asarray(ad) == a)
    with jax.set_mesh(mesh4):
        assert rel(jax.jit(lambda a, b: ml.solve(a, b, assume_a="pos"))(a, b), ref) < tol(np.float64, cond(a), 8)
    assert rel(ml.inv(a.tolist(), assume_a="pos", mesh=mesh4), np.linalg.inv(a)) < tol(np.float64, cond(a), 8)
    # integers promote as jnp promotes them
    assert ml.solve(np.eye(4, dtype=np.int32) * 2, np.ones(4, np.int32)).dtype == jnp.result_type(float)


def test_vmap(mesh4, rng):
    a, b = hpd(rng, 8, np.float64), rhs(rng, 8, 1, np.float64)[:, 0]
    xs = jax.vmap(lambda a: ml.solve(a, b, assume_a="pos"))(np.stack([a, 2 * a]))
    assert rel(xs[1], np.linalg.solve(2 * a, b)) < tol(np.float64, cond(a), 8)


@pytest.mark.parametrize("dt", [np.float64, np.complex64], ids=ids)
def test_batches(mesh4, rng, dt):
    """a (..., N, N) as jnp.linalg takes it: each matrix solved on its own."""
    a = np.stack([np.stack([hpd(rng, N, dt) for _ in range(3)]) for _ in range(2)])  # (2, 3, N, N)
    b, bk = np.stack([rhs(rng, N, 3, dt).T for _ in range(2)]), np.stack([[rhs(rng, N, 2, dt)] * 3] * 2)
    k = max(cond(m) for m in a.reshape(-1, N, N))
    ref = np.linalg.solve(c128(a), c128(b)[..., None])[..., 0]
    x = ml.solve(a, b, assume_a="pos")
    assert x.shape == (2, 3, N) and rel(x, ref) < tol(dt, k)
    assert rel(ml.solve(a, bk), np.linalg.solve(c128(a), c128(bk))) < tol(dt, k)
    r = ml.eigh(a)
    assert type(r).__name__ == "EighResult" and r.eigenvectors.shape == (2, 3, N, N)
    assert rel(r.eigenvalues, np.linalg.eigvalsh(c128(a))) < tol(dt, k)
    assert rel(ml.eigvalsh(a), np.linalg.eigvalsh(c128(a))) < tol(dt, k)
    assert rel(ml.inv(a, assume_a="pos"), np.linalg.inv(c128(a))) < tol(dt, k)
    s = ml.slogdet(a, assume_a="pos")
    assert s.sign.shape == (2, 3) and rel(s.logabsdet, np.linalg.slogdet(c128(a))[1]) < tol(dt, k)


# ---- derivatives -------------------------------------------------------------------------


def _fns(rng, dt):
    """(name, f, args, (dist, amp)) per function: f takes a non-Hermitian a
    through sym() where the routine reads a triangle (as test_grads.py)."""
    a, h, g, b = hpd(rng, N, dt), hermitian(rng, N, dt), general(rng, N, N, dt), rhs(rng, N, 2, dt)
    t, c = general(rng, M, N, dt), rhs(rng, M, 2, dt)

    def eig(a):
        w, v = ml.eigh(sym(a))
        return w, (v * jnp.tanh(w)) @ jnp.conj(v).T  # independent of the vectors' phases

    return [
        ("solve_pos", lambda a, b: ml.solve(sym(a), b, assume_a="pos"), (a, b), solve_conditioning(a)),
        ("solve_gen", lambda a, b: ml.solve(a, b), (g, b), solve_conditioning(g)),
        ("cho", lambda a, b: ml.cho_solve(ml.cho_factor(sym(a)), b), (a, b), solve_conditioning(a)),
        ("inv_pos", lambda a: ml.inv(sym(a), assume_a="pos"), (a,), solve_conditioning(a)),
        ("inv_gen", lambda a: ml.inv(a), (g,), solve_conditioning(g)),
        ("eigh", eig, (h,), eigen_conditioning(h)),
        ("eigvalsh", lambda a: ml.eigvalsh(sym(a)), (h,), eigen_conditioning(h)),
        ("slogdet_pos", lambda a: ml.slogdet(sym(a), assume_a="pos").logabsdet, (a,), solve_conditioning(a)),
        ("slogdet_her", lambda a: ml.slogdet(sym(a), assume_a="her").logabsdet, (h,), solve_conditioning(h)),
        ("lstsq", lambda a, b: ml.lstsq(a, b)[0], (t, c), solve_conditioning(t, least_squares=True)),
    ]


NAMES = [f[0] for f in _fns(np.random.default_rng(0), np.float64)]


@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=ids)
@pytest.mark.parametrize("name", NAMES)
def test_check_grads(mesh4, rng, name, dt):
    _, f, args, (dist, amp) = next(x for x in _fns(rng, dt) if x[0] == name)
    with jax.set_mesh(mesh4):
        check_grads_fd(jax.jit(f), args, 1, dist, amp)


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_grads_match_jnp(mesh4, rng, dt):
    """jax.grad of real losses through muster_jax.linalg and through
    jnp.linalg (one device) agree.  solve(assume_a="pos") is compared with
    jnp.linalg.solve of the same Hermitian matrix: jax.scipy's own
    solve(assume_a="pos") gives a different gradient for complex A (its
    custom_linear_solve says symmetric=True, A^T = A, which a complex
    Hermitian A is not; jax 0.10.2: 0.025 off a gradient of size 0.048),
    while muster's passes check_grads against finite differences."""
    a, g, b = hpd(rng, N, dt), general(rng, N, N, dt), rhs(rng, N, 2, dt)
    t, c = general(rng, M, N, dt), rhs(rng, M, 1, dt)
    pairs = [
        (lambda a: jnp.sum(jnp.abs(ml.solve(sym(a), b, assume_a="pos")) ** 2),
         lambda a: jnp.sum(jnp.abs(jnp.linalg.solve(sym(a), b)) ** 2), a),
        (lambda a: jnp.sum(jnp.abs(ml.solve(a, b)) ** 2), lambda a: jnp.sum(jnp.abs(jnp.linalg.solve(a, b)) ** 2), g),
        (lambda a: ml.slogdet(sym(a), assume_a="pos").logabsdet,
         lambda a: jnp.linalg.slogdet(sym(a)).logabsdet, a),
        (lambda a: jnp.sum(ml.eigvalsh(a) ** 3), lambda a: jnp.sum(jnp.linalg.eigvalsh(a) ** 3), a),
        (lambda a: jnp.sum(jnp.abs(ml.lstsq(a, c)[0]) ** 2),
         lambda a: jnp.sum(jnp.abs(jnp.linalg.lstsq(a, c)[0]) ** 2), t),
    ]
    with jax.set_mesh(mesh4):
        for i, (mine, theirs, x) in enumerate(pairs):
            k = cond(x)
            gm = jax.jit(jax.grad(mine))(x)
            gt = jax.grad(theirs)(c128(x) if np.iscomplexobj(x) else x.astype(np.float64))
            assert rel(gm, gt) < tol(dt, k * k * k, M), (i, rel(gm, gt), tol(dt, k ** 3, M))
