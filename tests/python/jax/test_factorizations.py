"""muster_jax.linalg.qr / svd / svdvals / polar and jaxmg.v1's qr / gesvd /
polar on 2 and 4 host devices (the lapack provider): against jnp.linalg
and jax.scipy.linalg.polar on fresh random tall, wide and square inputs in
every dtype (backward errors and orthogonality under 30 max(m, n) eps, as
docs/factorizations.md's checks; singular values and the unique polar
factors against the reference, scaled by the condition number), and
derivatives (check_grads both modes; gradients against jnp's)."""
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax.test_util import check_grads

import muster_jax.jaxmg.v1 as jaxmg
import muster_jax.linalg as ml
from jaxtest_util import DTYPES, eps

SHAPES = [(6, 4), (4, 6), (5, 5)]  # tall, wide, square; 5 and 6 over 4 devices: padded blocks
ids = lambda d: np.dtype(d).name  # noqa: E731


def c128(x):
    return np.asarray(x, np.complex128)


def mat(rng, m, n, dt):
    """m x n with distinct singular values in [0.5, 2] (condition 4)."""
    def unitary(k):
        g = rng.standard_normal((k, k)) + (1j * rng.standard_normal((k, k)) if np.dtype(dt).kind == "c" else 0)
        return np.linalg.qr(g)[0]
    k = min(m, n)
    s = np.linspace(2.0, 0.5, k) * (1 + 0.05 * rng.random(k))
    return (unitary(m)[:, :k] * s) @ unitary(n)[:k, :]


def tol(dt, m, n, cond=1.0):
    return 30 * max(m, n) * eps(dt) * cond


def rel(x, ref):
    return np.linalg.norm(c128(x) - c128(ref)) / np.linalg.norm(c128(ref))


def orth_err(q):
    """max |Q^H Q - I| over the shorter side."""
    q = c128(q)
    g = q.conj().T @ q if q.shape[0] >= q.shape[1] else q @ q.conj().T
    return np.abs(g - np.eye(g.shape[0])).max()


# every dtype on 4 devices, two on 2 (CI time)
CASES = [(4, dt) for dt in DTYPES] + [(2, np.float32), (2, np.complex128)]
CASE_IDS = [f"{n}dev-{ids(dt)}" for n, dt in CASES]


def make_mesh(ndev):
    if len(jax.devices()) < ndev:
        pytest.skip(f"needs {ndev} devices (XLA_FLAGS)")
    return jax.make_mesh((ndev,), ("x",), devices=jax.devices()[:ndev])


@pytest.mark.parametrize("ndev,dt", CASES, ids=CASE_IDS)
def test_qr(rng, ndev, dt):
    mesh = make_mesh(ndev)
    for m, n in SHAPES:
        a = mat(rng, m, n, dt).astype(dt)
        k = min(m, n)
        for mode, qs, rs in (("reduced", (m, k), (k, n)), ("complete", (m, m), (m, n))):
            q, r = ml.qr(a, mode, mesh=mesh)
            assert isinstance(ml.qr(a, mode, mesh=mesh), ml.QRResult)
            assert q.shape == qs and r.shape == rs and q.dtype == r.dtype == dt
            assert rel(q @ r, a) < tol(dt, m, n) and orth_err(q) < tol(dt, m, n)
            assert np.all(np.tril(np.asarray(r), -1) == 0)
            ref = np.linalg.qr(c128(a), mode)[1]  # R's rows are unique up to a phase
            assert rel(np.abs(c128(r)), np.abs(ref)) < tol(dt, m, n, 4)
        r_only = ml.qr(a, "r", mesh=mesh)
        assert r_only.shape == (k, n) and rel(np.abs(c128(r_only)), np.abs(np.linalg.qr(c128(a), "r"))) < tol(dt, m, n, 4)


@pytest.mark.parametrize("ndev,dt", CASES, ids=CASE_IDS)
def test_svd(rng, ndev, dt):
    mesh = make_mesh(ndev)
    for m, n in SHAPES:
        a = mat(rng, m, n, dt).astype(dt)
        k = min(m, n)
        ref = np.linalg.svd(c128(a), compute_uv=False)
        for full, us, vs in ((True, (m, m), (n, n)), (False, (m, k), (k, n))):
            res = ml.svd(a, full_matrices=full, mesh=mesh)
            assert isinstance(res, ml.SVDResult)
            u, s, vh = res
            assert u.shape == us and vh.shape == vs and s.shape == (k,) and s.dtype == jnp.finfo(dt).dtype
            assert rel((c128(u)[:, :k] * c128(s)) @ c128(vh)[:k], a) < tol(dt, m, n)
            assert orth_err(u) < tol(dt, m, n) and orth_err(vh) < tol(dt, m, n)
            assert np.abs(np.asarray(s) - ref).max() < tol(dt, m, n) * ref[0]
        assert np.abs(np.asarray(ml.svdvals(a, mesh=mesh)) - ref).max() < tol(dt, m, n) * ref[0]
        assert ml.svd(a, compute_uv=False, mesh=mesh).shape == (k,)


@pytest.mark.parametrize("ndev,dt", CASES, ids=CASE_IDS)
def test_polar(rng, ndev, dt):
    mesh = make_mesh(ndev)
    for m, n in SHAPES:
        a = mat(rng, m, n, dt).astype(dt)
        for side in ("right", "left"):
            u, p = ml.polar(a, side, mesh=mesh)
            ps = n if side == "right" else m
            assert u.shape == (m, n) and p.shape == (ps, ps) and u.dtype == p.dtype == dt
            prod = c128(u) @ c128(p) if side == "right" else c128(p) @ c128(u)
            assert rel(prod, a) < tol(dt, m, n) and orth_err(u) < tol(dt, m, n)
            assert np.abs(c128(p) - c128(p).conj().T).max() < tol(dt, m, n)
            if side == "right" and m >= n or side == "left" and m <= n:  # full rank: unique factors
                ur, pr = jsl.polar(c128(a), side, method="svd")
                assert rel(u, ur) < tol(dt, m, n, 4) and rel(p, pr) < tol(dt, m, n, 4)


def _grad_fns():
    """Real or complex outputs that do not depend on the SVD vectors'
    phases (only on the subspaces); QR's signs are LAPACK's, fixed near a
    point."""
    return [
        ("qr", lambda a: (ml.qr(a), ml.qr(a, "r"))),
        ("svdvals", lambda a: ml.svdvals(a)),
        ("svd", lambda a: (lambda u, s, vh: (u * jnp.tanh(s)) @ vh)(*ml.svd(a, full_matrices=False))),
        ("polar", lambda a: ml.polar(a)),
    ]


@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=ids)
@pytest.mark.parametrize("name", [f[0] for f in _grad_fns()])
def test_check_grads(rng, name, dt):
    """check_grads, forward and reverse, on a tall and a wide A (4 devices)."""
    f = dict(_grad_fns())[name]
    mesh = jax.make_mesh((min(4, len(jax.devices())),), ("x",))
    with jax.set_mesh(mesh):
        for m, n in ((6, 4), (4, 6)):
            check_grads(jax.jit(f), (mat(rng, m, n, dt).astype(dt),), order=1, modes=("fwd", "rev"),
                        eps=1e-6, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dt", [np.float32, np.complex128], ids=ids)
def test_grads_match_jnp(rng, dt):
    """jax.grad of real losses through muster and through jnp agree."""
    mesh = jax.make_mesh((min(4, len(jax.devices())),), ("x",))
    a = mat(rng, 6, 4, dt).astype(dt)
    w = jnp.asarray(rng.standard_normal((6, 4)))
    pairs = [
        (lambda x: jnp.sum(jnp.abs(ml.qr(x).Q * w) ** 2), lambda x: jnp.sum(jnp.abs(jnp.linalg.qr(x).Q * w) ** 2)),
        (lambda x: jnp.sum(ml.svdvals(x) ** 3), lambda x: jnp.sum(jnp.linalg.svd(x, compute_uv=False) ** 3)),
        (lambda x: jnp.sum(jnp.abs(ml.polar(x)[0] * w) ** 2),
         lambda x: jnp.sum(jnp.abs(jsl.polar(x, method="svd")[0] * w) ** 2)),
    ]
    with jax.set_mesh(mesh):
        for i, (mine, theirs) in enumerate(pairs):
            gm = jax.jit(jax.grad(mine))(a)
            gt = jax.grad(theirs)(c128(a) if np.iscomplexobj(a) else a.astype(np.float64))
            assert rel(gm, gt) < tol(dt, 6, 4, 64), (i, rel(gm, gt))


def test_batch_and_refusals(rng):
    mesh = jax.make_mesh((min(4, len(jax.devices())),), ("x",))
    a = np.stack([mat(rng, 5, 3, np.float64) for _ in range(2)])
    q, r = ml.qr(a, mesh=mesh)
    assert q.shape == (2, 5, 3) and r.shape == (2, 3, 3)
    assert rel(jnp.einsum("bij,bjk->bik", q, r), a) < tol(np.float64, 5, 3)
    s = ml.svdvals(a, mesh=mesh)
    assert rel(s, np.linalg.svd(a, compute_uv=False)) < tol(np.float64, 5, 3)
    with pytest.raises(ValueError, match="mode"):
        ml.qr(a[0], "economic")
    with pytest.raises(ValueError, match="subset_by_index"):
        ml.svd(a[0], subset_by_index=(0, 1))
    with pytest.raises(NotImplementedError, match="full_matrices"):
        jax.jvp(lambda x: ml.svd(x, mesh=mesh), (a[0],), (a[0],))


def test_jaxmg_v1(rng):
    """jaxmg 1.4.1's names and return forms."""
    mesh = jax.make_mesh((min(4, len(jax.devices())),), ("x",))
    a = mat(rng, 8, 4, np.float64)
    q, r = jaxmg.qr(a, 2, mesh)
    assert q.shape == (8, 4) and r.shape == (4, 4) and rel(q @ r, a) < tol(np.float64, 8, 4)
    q2, r2, st = jaxmg.qr_shardmap_ctx(a, 2, mesh)
    assert int(st) == 0 and rel(q2, q) == 0
    u, s, vh = jaxmg.gesvd(a, 2, mesh)
    assert u.shape == (8, 4) and vh.shape == (4, 4) and rel((u * s) @ vh, a) < tol(np.float64, 8, 4)
    u_full, s1 = jaxmg.gesvd(a, 2, mesh, compute_vh=False, full_matrices=True)
    assert u_full.shape == (8, 8) and rel(s1, s) < tol(np.float64, 8, 4)
    assert jaxmg.gesvd(a, 2, mesh, compute_u=False, compute_vh=False).shape == (4,)
    work, s2, vh2, st = jaxmg.gesvd_shardmap_ctx(a, 2, mesh, compute_u=False)
    assert work.shape == a.shape and int(st) == 0 and vh2.shape == (4, 4)
    up, h = jaxmg.polar(a, 2, mesh)
    assert rel(up @ h, a) < tol(np.float64, 8, 4)
    up2, st = jaxmg.polar_shardmap_ctx(a, 2, mesh, compute_h=False)
    assert int(st) == 0 and rel(up2, up) < tol(np.float64, 8, 4)
    with pytest.raises(ValueError, match="m >= n"):
        jaxmg.qr(a.T, 2, mesh)
