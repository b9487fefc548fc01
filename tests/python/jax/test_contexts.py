"""The solves inside jit, inside the caller's shard_map, with pre-cyclic
input, twice in one program, and from two Python threads at once."""
import ctypes
import threading
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax as mj
from muster_jax import _lib
from jaxtest_util import ND, check_potri, check_potrs, check_syevd, hermitian, hpd, rhs

TOL = 30.0


def test_inside_jit(rng, mesh4):
    n = 20
    a, b = hpd(rng, n, np.float64), rhs(rng, n, 2, np.float64)

    @jax.jit
    def f(a, b):
        x = mj.potrs(a * 2.0, b, mesh=mesh4, in_specs=(P(None, "x"), P(None, None)))
        w = mj.syevd(a, mesh=mesh4, in_specs=P(None, "x"), return_eigenvectors=False)
        return x * 2.0, w

    with jax.set_mesh(mesh4):
        x, w = f(jnp.asarray(a), jnp.asarray(b))
    assert check_potrs(a, b, x) < TOL
    assert np.abs(np.asarray(w) - np.linalg.eigvalsh(a)).max() < 1e-12 * n * np.abs(w).max()


def test_two_solves_in_one_program(rng, mesh4):
    """Two independent solves of the same shape in one jit: each call site
    gets its own group, so their instances never mix."""
    n = 16
    a1, a2 = hpd(rng, n, np.float64), hpd(rng, n, np.float64)
    b = rhs(rng, n, 1, np.float64)

    @jax.jit
    def f(a1, a2, b):
        spec = (P(None, "x"), P(None, None))
        return (mj.potrs(a1, b, mesh=mesh4, in_specs=spec), mj.potrs(a2, b, mesh=mesh4, in_specs=spec))

    with jax.set_mesh(mesh4):
        x1, x2 = f(jnp.asarray(a1), jnp.asarray(a2), jnp.asarray(b))
    assert check_potrs(a1, b, x1) < TOL
    assert check_potrs(a2, b, x2) < TOL


def test_user_shard_map(rng, mesh4):
    """jaxmg's potrs_no_shardmap example: shift the diagonal of each shard,
    then solve inside the same shard_map."""
    n, shift = 16, 0.1
    a = hpd(rng, n, np.complex128)
    b = rhs(rng, n, 1, np.complex128)

    @jax.jit
    def shift_and_solve(a, b):
        def body(a_loc, b_loc):
            w = a_loc.shape[1]
            rows = jnp.arange(w) + w * jax.lax.axis_index("x")
            a_loc = a_loc.at[rows, jnp.arange(w)].add(shift)
            return mj.potrs_no_shardmap(a_loc, b_loc, None, axis_name="x")

        return jax.shard_map(body, mesh=mesh4, in_specs=(P(None, "x"), P(None, None)),
                             out_specs=(P(None, None), P(None)), check_vma=False)(a, b)

    aj = jax.device_put(jnp.asarray(a), NamedSharding(mesh4, P(None, "x")))
    x, status = shift_and_solve(aj, jnp.asarray(b))
    assert int(status[0]) == 0
    assert check_potrs(a + shift * np.eye(n), b, x) < TOL


def test_user_shard_map_potri_syevd(rng, mesh4):
    n = 12
    a = hpd(rng, n, np.float32)

    def body(a_loc):
        inv, s1 = mj.potri_shardmap_ctx(a_loc, axis_name="x")
        w, v, s2 = mj.syevd_shardmap_ctx(a_loc, axis_name="x")
        return inv, w, v, s1 + s2

    f = jax.jit(jax.shard_map(body, mesh=mesh4, in_specs=P(None, "x"),
                              out_specs=(P(None, "x"), P(None), P(None, "x"), P(None)), check_vma=False))
    inv, w, v, status = f(jax.device_put(jnp.asarray(a), NamedSharding(mesh4, P(None, "x"))))
    assert int(status[0]) == 0
    assert check_potri(a, inv) < TOL
    assert check_syevd(a, w, v)[0] < TOL


def runtime_cyclic(a, T, R):
    """The runtime's host relayout (muster_layout_block_to_cyclic) of a."""
    lib = _lib.runtime()
    n = a.shape[0]
    S = -(-n // R)
    LC = mj.local_cols(n, T, R)
    f = np.asfortranarray
    blocks = [f(np.pad(a[:, r * S:min((r + 1) * S, n)], ((0, 0), (0, S - len(range(r * S, min((r + 1) * S, n)))))))
              for r in range(R)]
    cyc = [np.zeros((n, LC), order="F") for _ in range(R)]
    vp = ctypes.c_void_p * R
    rc = lib.muster_layout_block_to_cyclic(2, ctypes.c_int64(n), ctypes.c_int64(n), ctypes.c_int64(T),
                                           R, vp(*[x.ctypes.data for x in blocks]),
                                           vp(*[x.ctypes.data for x in cyc]))
    assert rc == 0, _lib.last_error()
    return np.concatenate(cyc, axis=1)


@pytest.mark.parametrize("n,pick", [(24, 1), (22, -2), (40, 1), (100, 3)])
def test_cyclic_layout_matches_runtime(rng, mesh4, n, pick):
    tiles = mj.calculate_all_valid_T_A(n, ND)
    T = tiles[pick % len(tiles)]
    a = rng.standard_normal((n, n))
    ac = mj.cyclic_1d_layout(jnp.asarray(a), T, mesh=mesh4)
    assert ac.shape == (n, ND * mj.local_cols(n, T, ND))
    np.testing.assert_array_equal(np.asarray(ac), runtime_cyclic(a, T, ND))
    np.testing.assert_array_equal(np.asarray(mj.cyclic_1d_to_block(ac, n, T, mesh=mesh4)), a)


@pytest.mark.parametrize("dt", [np.float64, np.complex64], ids=lambda d: np.dtype(d).name)
def test_pre_cyclic_input(rng, mesh4, dt):
    n = 22
    T = mj.calculate_all_valid_T_A(n, ND)[1]
    a, b = hpd(rng, n, dt), rhs(rng, n, 2, dt)
    ac = mj.cyclic_1d_layout(jnp.asarray(a), T, mesh=mesh4)
    x = mj.potrs(ac, jnp.asarray(b), T_A=T, mesh=mesh4, in_specs=(P(None, "x"), P(None, None)),
                 cyclic_1d=True)
    assert check_potrs(a, b, x) < TOL
    inv_c = mj.potri(ac, T_A=T, mesh=mesh4, in_specs=P(None, "x"), cyclic_1d=True)
    assert check_potri(a, mj.cyclic_1d_to_block(inv_c, n, T, mesh=mesh4)) < TOL
    w, v_c = mj.syevd(ac, T_A=T, mesh=mesh4, in_specs=P(None, "x"), cyclic_1d=True)
    assert check_syevd(a, w, mj.cyclic_1d_to_block(v_c, n, T, mesh=mesh4))[0] < TOL


def test_two_threads_at_once(rng, mesh4):
    """Two Python threads launch solves at the same time on the same devices:
    each launch has its own run id, hence its own group."""
    n = 32
    cases = [(hpd(rng, n, np.float64), rhs(rng, n, 1, np.float64)) for _ in range(2)]
    out, errors = [None, None], []
    start = threading.Barrier(2)

    def run(i):
        try:
            start.wait()
            for _ in range(5):
                a, b = cases[i]
                out[i] = np.asarray(mj.potrs(jnp.asarray(a), jnp.asarray(b), mesh=mesh4,
                                             in_specs=(P(None, "x"), P(None, None))))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a solve hung"
    assert not errors, errors
    for (a, b), x in zip(cases, out):
        assert check_potrs(a, b, x) < TOL


def test_repeated_calls_reuse(rng, mesh4):
    """Many calls of one compiled solve (a new group per launch)."""
    n = 16
    a, b = hpd(rng, n, np.float64), rhs(rng, n, 1, np.float64)
    aj = jax.device_put(jnp.asarray(a), NamedSharding(mesh4, P(None, "x")))
    for _ in range(50):
        x = mj.potrs(aj, jnp.asarray(b), mesh=mesh4, in_specs=(P(None, "x"), P(None, None)))
    assert check_potrs(a, b, x) < TOL


def test_many_threads_share_the_name_pool(rng, mesh4):
    """Four threads, twenty solves each, on the same devices: launches share a
    pool of group names in this process, never one group between two
    launches; each thread checks its own answers."""
    n = 8
    errors = []

    def run(seed):
        try:
            r = np.random.default_rng(seed)
            for _ in range(20):
                a, b = hpd(r, n, np.float64), rhs(r, n, 1, np.float64)
                x = mj.potrs(jnp.asarray(a), jnp.asarray(b), mesh=mesh4, in_specs=(P(None, "x"), P(None, None)))
                assert check_potrs(a, b, x) < TOL
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(int(rng.integers(1 << 30)),)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not any(t.is_alive() for t in threads), "a solve hung"
    assert not errors, errors
