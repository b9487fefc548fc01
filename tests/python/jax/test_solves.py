"""Every routine x dtype on meshes of 1, 2 and 4 devices, N divisible by the
devices or not, A column- or row-sharded; residuals on fresh random inputs."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax as mj
from jaxtest_util import ND, ndevices, DTYPES, check_potri, check_potrs, check_syevd, hermitian, hpd, rhs

TOL = 30.0  # scaled residuals are O(1) when right; a wrong answer is ~1/eps


def mesh_of(ndev):
    if ndev > ndevices():
        pytest.skip(f"needs {ndev} devices")
    return jax.make_mesh((ndev,), ("x",), devices=jax.devices()[:ndev])


def place(x, mesh, spec):
    return jax.device_put(jnp.asarray(x), NamedSharding(mesh, spec))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndev", [1, 2, 4])
@pytest.mark.parametrize("n", [24, 13])
def test_potrs(rng, dt, ndev, n):
    mesh = mesh_of(ndev)
    a, b = hpd(rng, n, dt), rhs(rng, n, 3, dt)
    spec = P(None, "x") if n % ndev == 0 else P(None, None)
    aj, bj = place(a, mesh, spec), jnp.asarray(b)
    x = mj.potrs(aj, bj, mesh=mesh, in_specs=(P(None, "x"), P(None, None)))
    assert x.shape == (n, 3) and x.dtype == dt
    assert check_potrs(a, b, x) < TOL
    # the routine overwrites A and B in place: the caller's arrays are untouched
    np.testing.assert_array_equal(np.asarray(aj), a)
    np.testing.assert_array_equal(np.asarray(bj), b)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndev", [1, 2, 4])
@pytest.mark.parametrize("n", [24, 13])
def test_potri(rng, dt, ndev, n):
    mesh = mesh_of(ndev)
    a = hpd(rng, n, dt)
    aj = jnp.asarray(a)
    inv = mj.potri(aj, mesh=mesh, in_specs=P(None, "x"))
    assert inv.shape == (n, n) and inv.dtype == dt
    assert check_potri(a, inv) < TOL
    np.testing.assert_array_equal(np.asarray(aj), a)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndev", [1, 2, 4])
@pytest.mark.parametrize("n", [24, 13])
def test_syevd(rng, dt, ndev, n):
    mesh = mesh_of(ndev)
    a = hermitian(rng, n, dt)
    aj = jnp.asarray(a)
    w, v = mj.syevd(aj, mesh=mesh, in_specs=P(None, "x"))
    np.testing.assert_array_equal(np.asarray(aj), a)
    assert w.shape == (n,) and v.shape == (n, n)
    assert w.dtype == np.finfo(np.dtype(dt)).dtype and v.dtype == dt
    err, ascending = check_syevd(a, w, v)
    assert ascending
    assert err < TOL


@pytest.mark.parametrize("dt", [np.float64, np.complex64], ids=lambda d: np.dtype(d).name)
def test_syevd_values_only(rng, dt):
    mesh = mesh_of(ND)
    a = hermitian(rng, 16, dt)
    w = mj.syevd(jnp.asarray(a), mesh=mesh, in_specs=P(None, "x"), return_eigenvectors=False)
    ref = np.linalg.eigvalsh(np.asarray(a, np.complex128))
    assert np.abs(np.asarray(w) - ref).max() < 30 * 16 * np.finfo(np.dtype(dt)).eps * np.abs(ref).max()


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_row_sharded(rng, dt):
    """A sharded P('x', None): each device's row block is the conjugate
    transpose of its column block (A is Hermitian); nothing moves between devices."""
    mesh = mesh_of(ND)
    n = 20
    a, b = hpd(rng, n, dt), rhs(rng, n, 2, dt)
    aj = place(a, mesh, P("x", None))
    x = mj.potrs(aj, jnp.asarray(b), mesh=mesh, in_specs=(P("x", None), P(None, None)))
    assert check_potrs(a, b, x) < TOL
    inv = mj.potri(aj, mesh=mesh, in_specs=(P("x", None),))
    assert check_potri(a, inv) < TOL
    w, v = mj.syevd(aj, mesh=mesh, in_specs=P("x", None))
    assert check_syevd(a, w, v)[0] < TOL


def test_b_sharded_and_vector(rng):
    mesh = mesh_of(ND)
    n = 16
    a, b = hpd(rng, n, np.float64), rhs(rng, n, 4, np.float64)
    bj = place(b, mesh, P("x", None))
    x = mj.potrs(place(a, mesh, P(None, "x")), bj, mesh=mesh, in_specs=(P(None, "x"), P("x", None)))
    assert check_potrs(a, b, x) < TOL
    x1 = mj.potrs(jnp.asarray(a), jnp.asarray(b[:, 0]), mesh=mesh)
    assert x1.shape == (n,)
    assert check_potrs(a, b[:, :1], np.asarray(x1)[:, None]) < TOL


@pytest.mark.parametrize("T_A", [None, 1, 2, 8])
def test_tiles(rng, T_A):
    """Any valid tile gives the same answer (lapack ignores it; cusolvermg
    uses it)."""
    mesh = mesh_of(ND)
    n = 32
    a, b = hpd(rng, n, np.float64), rhs(rng, n, 1, np.float64)
    x, status = mj.potrs(jnp.asarray(a), jnp.asarray(b), T_A=T_A, mesh=mesh,
                         in_specs=(P(None, "x"), P(None, None)), return_status=True)
    assert int(status) == 0
    assert check_potrs(a, b, x) < TOL


def test_auto_axis_mesh(rng):
    """Meshes with Auto axes (jax.sharding.Mesh's default) work too."""
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))
    a, b = hpd(rng, 10, np.float32), rhs(rng, 10, 1, np.float32)
    x = mj.potrs(jnp.asarray(a), jnp.asarray(b), mesh=mesh, in_specs=(P(None, "x"), P(None, None)))
    assert check_potrs(a, b, x) < TOL


def test_two_dimensional_mesh(rng):
    """A 2 x 2 mesh with A sharded over 'y' only: each row of the mesh ('x')
    solves on its own (separate groups, keyed by the replica index)."""
    if ndevices() < 4:
        pytest.skip("needs 4 devices")
    mesh = jax.make_mesh((2, 2), ("x", "y"))
    n = 12
    a, b = hpd(rng, n, np.float64), rhs(rng, n, 2, np.float64)
    x = mj.potrs(place(a, mesh, P(None, "y")), jnp.asarray(b), mesh=mesh,
                 in_specs=(P(None, "y"), P(None, None)))
    # x is replicated: np.asarray(x) would read one device's copy and return
    # while the other mesh row may still be solving (its group still
    # forming, its segment still named).  Wait for all, check every copy.
    x.block_until_ready()
    assert len(x.addressable_shards) == 4
    for sh in x.addressable_shards:
        assert check_potrs(a, b, np.asarray(sh.data)) < TOL, sh.device
