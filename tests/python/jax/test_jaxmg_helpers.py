"""muster_jax.jaxmg.v0's jaxmg 0.0.9 layout helpers (cyclic_1d, pad_rows,
unpad_rows, get_cols_cyclic, verify_cyclic, plot_block_to_cyclic),
cyclic_1d_layout without mesh=, and v1's jaxmg 1.4.1 *_shardmap_ctx forms
and __version__, each against a plain numpy model or the function it
reuses."""
import importlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax
from muster_jax import _runtime
from jaxtest_util import ND, check_potrs, hermitian, hpd, rhs

v0 = importlib.import_module("muster_jax.jaxmg.v0")
v1 = importlib.import_module("muster_jax.jaxmg.v1")


def model_cols(N, N_batch, T_A, R):
    """jaxmg's walk over the rows: a new device every T_A rows, round
    robin; each device fills its buffer from the top."""
    S, filled, dev, out = N // R, [0] * R, -1, []
    for i in range(N):
        if i % T_A == 0:
            dev = (dev + 1) % R
        out.append((i, i + (N_batch - S) * (i // S), dev * N_batch + filled[dev]))
        filled[dev] += 1
    return out


def model_cyclic(a, T_A, R):
    """The cyclic form of a (N x K): row i at its dst, other rows zero."""
    N = a.shape[0]
    S = N // R
    N_batch = S + ((-S) % T_A if T_A < S else 0)
    out = np.zeros((R * N_batch, a.shape[1]), a.dtype)
    for i, _, dst in model_cols(N, N_batch, T_A, R):
        out[dst] = a[i]
    return out


def fits(N, T_A, R):
    S = N // R
    N_batch = S + ((-S) % T_A if T_A < S else 0)
    return max(np.bincount([d for _, _, d in ((i, 0, (i // T_A) % R) for i in range(N))], minlength=R)) <= N_batch


@pytest.mark.parametrize("trial", range(6))
def test_get_cols_cyclic_matches_model(rng, trial):
    R = int(rng.integers(1, 6))
    N = R * int(rng.integers(1, 12))
    T_A = int(rng.integers(1, N + 1))
    N_batch = N // R + int(rng.integers(0, 4))
    assert v0.get_cols_cyclic(N, N_batch, T_A, R) == model_cols(N, N_batch, T_A, R)


def test_get_cols_cyclic_refuses():
    with pytest.raises(ValueError, match="N >= num_devices"):
        v0.get_cols_cyclic(2, 1, 1, 4)


@pytest.mark.parametrize("trial", range(4))
def test_cyclic_1d_matches_model_and_verifies(rng, mesh4, trial):
    R = ND
    N = R * int(rng.integers(2, 9))
    tiles = [t for t in range(1, N + 1) if fits(N, t, R)]
    T_A = int(rng.choice(tiles))
    a = rng.standard_normal((N, N))
    A = jax.device_put(a, NamedSharding(mesh4, P("x", None)))
    c = v0.cyclic_1d(A, T_A, mesh4, (P("x", None),))
    np.testing.assert_array_equal(np.asarray(c), model_cyclic(a, T_A, R))
    assert c.sharding.spec[0] == "x"
    # and back: the model's map inverted gives a again
    back = np.asarray(c)[[d for _, _, d in model_cols(N, c.shape[0] // R, T_A, R)]]
    np.testing.assert_array_equal(back, a)
    assert v0.verify_cyclic(a, c, T_A) is True
    bad = np.asarray(c).copy()
    i, _, dst = model_cols(N, c.shape[0] // R, T_A, R)[int(rng.integers(0, N))]
    bad[dst, int(rng.integers(0, N))] += 1.0
    bad = jax.device_put(bad, NamedSharding(mesh4, P("x", None)))
    assert v0.verify_cyclic(a, bad, T_A, strict=False) is False
    with pytest.raises(AssertionError, match=rf"row {i} of A is not row {dst} of A_cyclic"):
        v0.verify_cyclic(a, bad, T_A)


def test_cyclic_1d_prepadded_and_refusals(rng, mesh4):
    R, N, T_A = ND, 6 * ND, 4          # S = 6: 2 padding rows a shard
    a = rng.standard_normal((N, N))
    want = model_cyclic(a, T_A, R)
    padded = jax.jit(jax.shard_map(lambda x: v0.pad_rows(x, 2), mesh=mesh4, in_specs=P("x", None),
                                   out_specs=P("x", None)))(jax.device_put(a, NamedSharding(mesh4, P("x", None))))
    assert padded.shape == (N + 2 * R, N)
    c = v0.cyclic_1d(padded, T_A, None, P("x", None), pad=False)      # mesh read off the array
    np.testing.assert_array_equal(np.asarray(c), want)
    with pytest.raises(ValueError, match=r"pad=False, but each shard's 6 rows are not a multiple of T_A=4"):
        v0.cyclic_1d(jnp.asarray(a), T_A, mesh4, P("x", None), pad=False)
    with pytest.raises(ValueError, match=r"A must be row-sharded"):
        v0.cyclic_1d(jnp.asarray(a), T_A, mesh4, P(None, "x"))
    with pytest.raises(ValueError, match=r"does not fit .* tiles that fit: \["):
        v0.cyclic_1d(jnp.asarray(a), N - 1, mesh4, P("x", None))


@pytest.mark.parametrize("trial", range(3))
def test_pad_unpad_rows_round_trip(rng, trial):
    rows, cols, p = (int(v) for v in rng.integers(1, 7, size=3))
    x = rng.standard_normal((rows, cols))
    y = v0.pad_rows(jnp.asarray(x), p)
    assert y.shape == (rows + p, cols)
    np.testing.assert_array_equal(np.asarray(y), np.vstack([x, np.zeros((p, cols))]))
    np.testing.assert_array_equal(np.asarray(v0.unpad_rows(y, p)), x)
    np.testing.assert_array_equal(np.asarray(v0.unpad_rows(jnp.asarray(x), 0)), x)


def test_calculate_padding():
    assert [v0.calculate_padding(s, 4) for s in range(1, 9)] == [3, 2, 1, 0, 3, 2, 1, 0]


def test_cyclic_1d_layout_without_mesh(rng, mesh4):
    n = 4 * ND
    a = rng.standard_normal((n, n))
    want = np.asarray(muster_jax.cyclic_1d_layout(jnp.asarray(a), 2, mesh=mesh4))
    A = jax.device_put(a, NamedSharding(mesh4, P(None, "x")))
    got = v0.cyclic_1d_layout(A, 2)                                    # the mesh off A
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.sharding.mesh == mesh4
    with jax.set_mesh(mesh4):                                          # the context's
        np.testing.assert_array_equal(np.asarray(v0.cyclic_1d_layout(jnp.asarray(a), 2)), want)
    with pytest.raises(ValueError, match=r"cyclic_1d_layout: pass mesh="):
        v0.cyclic_1d_layout(a, 2)


def test_plot_block_to_cyclic_agg(monkeypatch):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    from muster_jax.jaxmg._plot import ownership
    N, T_A, R = 10, 2, 2                      # S = 5, 1 padding column a device
    before, after = ownership(N, T_A, R)
    assert before.tolist() == [0, 0, 0, 0, 0, 2, 1, 1, 1, 1, 1, 2]
    assert after.tolist() == [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 2, 2]
    fig, axs = v0.plot_block_to_cyclic(N, T_A, R, N_rows=3)
    for ax, labels in zip(axs, (before, after)):
        np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), np.tile(labels, (3, 1)))
    fig.canvas.draw()
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_plot_block_to_cyclic_without_matplotlib(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"plot_block_to_cyclic needs matplotlib \(pip install matplotlib\)"):
        v0.plot_block_to_cyclic(8, 2, 2)


def test_v1_version():
    assert v1.__version__ == muster_jax.__version__ == _runtime.package_version("muster_jax")
    assert "__version__" in v1.__all__


def test_v1_shardmap_ctx_forms(rng, mesh4):
    """jaxmg 1.4.1's *_shardmap_ctx: global arrays inside the caller's
    jax.jit, work buffers first; the rest as v1's own functions give."""
    n, T_A = 8, 2
    a, h, b = hpd(rng, n, np.float64), hermitian(rng, n, np.float64), rhs(rng, n, 2, np.float64)
    t, c = rng.standard_normal((12, n)), rng.standard_normal(12)
    put = lambda m: jax.device_put(m, NamedSharding(mesh4, P("x")))  # noqa: E731
    A, H, T = put(a), put(h), put(t)
    with jax.set_mesh(mesh4):
        aw, x, status = jax.jit(lambda a, b: v1.potrs_shardmap_ctx(a, b, T_A))(A, b)
        aw2, x2, logdet, status2 = jax.jit(lambda a, b: v1.potrs_shardmap_ctx(a, b, T_A, return_logdet=True))(A, b)
        hw, w, v, s3 = jax.jit(lambda a: v1.syevd_shardmap_ctx(a, T_A))(H)
        _, w_only, s4 = jax.jit(lambda a: v1.syevd_shardmap_ctx(a, T_A, return_eigenvectors=False))(H)
        gw, y, s5 = jax.jit(lambda a, b: v1.lu_solve_shardmap_ctx(a, b, T_A))(put(a + h), b)
        tw, bw, z, s6 = jax.jit(lambda a, b: v1.least_squares_shardmap_ctx(a, b, T_A))(T, c)
    np.testing.assert_allclose(np.asarray(x), np.asarray(v1.potrs(A, b, T_A)), rtol=1e-12, atol=1e-12)
    assert check_potrs(a, b, x) < 10 and int(status) == 0 and int(status2) == 0
    np.testing.assert_array_equal(np.asarray(aw), a)
    np.testing.assert_allclose(float(logdet), float(v1.potrs(A, b, T_A, return_logdet=True)[1]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x2), np.asarray(x), rtol=1e-12, atol=1e-12)
    w_ref, v_ref = v1.syevd(H, T_A)
    np.testing.assert_allclose(np.asarray(w), np.asarray(w_ref), atol=1e-12 * n)
    np.testing.assert_allclose(np.abs(np.asarray(v)), np.abs(np.asarray(v_ref)), atol=1e-9)
    np.testing.assert_allclose(np.asarray(w_only), np.asarray(w_ref), atol=1e-12 * n)
    assert int(s3) == 0 and int(s4) == 0 and np.asarray(hw).shape == (n, n)
    np.testing.assert_allclose(np.asarray(y), np.asarray(v1.lu_solve(put(a + h), b, T_A)), rtol=1e-10, atol=1e-12)
    assert int(s5) == 0 and np.asarray(gw).shape == (n, n)
    z_ref = np.asarray(v1.least_squares(T, c, T_A))
    np.testing.assert_allclose(np.asarray(z), z_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(z), np.linalg.lstsq(t, c, rcond=None)[0], rtol=1e-8, atol=1e-10)
    assert bw.shape == (12,) and np.allclose(np.asarray(bw)[:n], z_ref) and not np.any(np.asarray(bw)[n:])
    assert int(s6) == 0 and np.asarray(tw).shape == t.shape
