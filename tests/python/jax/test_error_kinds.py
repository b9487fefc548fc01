"""One kind per failure class, whatever the call form (docs/errors.md,
"JAX"): a numerical failure is JaxRuntimeError INVALID_ARGUMENT eager (2-D
or 1-D b), under jit, under vmap, through muster_jax.linalg and jaxmg.v1,
never "INTERNAL: Error dispatching computation"; a provider that cannot
run is UNIMPLEMENTED and named by whoever forced it; every user mistake is
a ValueError / TypeError raised in Python, naming the argument and what to
pass instead."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax as mj
import muster_jax.jaxmg.v0 as v0
import muster_jax.jaxmg.v1 as v1
import muster_jax.linalg as ml
from jaxtest_util import hpd, rhs

RuntimeErr = jax.errors.JaxRuntimeError


def not_pd(n=8, k=5):
    return np.diag(np.where(np.arange(n) == k, -1.0, 2.0))


def singular(n=8):
    a = np.eye(n) * 2
    a[:, 3] = a[:, 2]
    return a


def kind_of(fn):
    """The status text a failed call raises, when its result is used."""
    with pytest.raises(RuntimeErr) as e:
        jax.block_until_ready(fn())
    return str(e.value)


def numerical_forms(mesh):
    A, G, b2, b1 = not_pd(), singular(), np.ones((8, 1)), np.ones(8)
    sh = mesh and NamedSharding(mesh, P(None, "x"))
    return {
        "potrs eager 2-D b": lambda: mj.potrs(A, b2, mesh=mesh),
        "potrs eager 1-D b": lambda: mj.potrs(A, b1, mesh=mesh),
        "potrs eager logdet": lambda: mj.potrs(A, b1, mesh=mesh, return_logdet=True),
        "potrs jit 1-D b": lambda: jax.jit(lambda a, b: mj.potrs(a, b, mesh=mesh))(A, b1),
        "potrs eager vmap": lambda: jax.vmap(lambda a: mj.potrs(a, b1, mesh=mesh))(np.stack([A, A])),
        "potri eager": lambda: mj.potri(A, mesh=mesh),
        "potrs jit grad": lambda: _in(mesh, jax.jit(jax.grad(lambda a: jnp.sum(mj.potrs(a, b1, mesh=mesh)))), A),
        "linalg.solve jit grad": lambda: _in(mesh, jax.jit(jax.grad(
            lambda a: jnp.sum(ml.solve(a, b1, assume_a="pos")))), A),
        "lu_solve eager 1-D b": lambda: mj.lu_solve(G, b1, mesh=mesh),
        "least_squares eager 1-D b": lambda: mj.least_squares(G, b1, mesh=mesh),
        "linalg.solve pos": lambda: ml.solve(A, b1, assume_a="pos", mesh=mesh),
        "linalg.solve gen": lambda: ml.solve(G, b1, mesh=mesh),
        "linalg.inv pos": lambda: ml.inv(A, assume_a="pos", mesh=mesh),
        "linalg.cho_factor": lambda: ml.cho_factor(A, mesh=mesh)[0].factor,
        "linalg.slogdet pos": lambda: ml.slogdet(A, assume_a="pos", mesh=mesh),
        "linalg.lstsq": lambda: ml.lstsq(G, b1, mesh=mesh),
        "linalg.solve batch": lambda: ml.solve(np.stack([np.eye(8), A]), np.ones((2, 8)), assume_a="pos", mesh=mesh),
        "jaxmg.v1 potrs": lambda: v1.potrs(jax.device_put(A, sh), b1, 2),
        "jaxmg.v0 potrs": lambda: v0.potrs(jax.device_put(A, sh), b1, 2, mesh, (P(None, "x"), P(None, None))),
    }


def _in(mesh, f, *args):
    with jax.set_mesh(mesh):
        return jax.block_until_ready(f(*args))


FORMS = list(numerical_forms(None))


@pytest.mark.parametrize("form", FORMS)
def test_numerical_failure_is_invalid_argument_in_every_form(mesh4, form):
    msg = kind_of(numerical_forms(mesh4)[form])
    assert msg.startswith("INVALID_ARGUMENT: muster_jax "), msg[:300]
    assert "Error dispatching" not in msg
    assert re.search(r"not positive definite|singular|rank deficient", msg), msg[:300]


def test_forced_provider_names_who_forced_it(mesh4, monkeypatch):
    a, b = hpd(np.random.default_rng(1), 8, np.float64), np.ones(8)
    monkeypatch.setenv("MUSTER_PROVIDER", "nosuch")
    msg = kind_of(lambda: mj.potrs(a, b, mesh=mesh4))
    assert msg.startswith("UNIMPLEMENTED: ") and "'nosuch' (MUSTER_PROVIDER)" in msg, msg[:300]
    assert "args.provider" not in msg and "Error dispatching" not in msg
    monkeypatch.delenv("MUSTER_PROVIDER")
    msg = kind_of(lambda: mj.potrs(a, b, mesh=mesh4, provider="nosuch"))
    assert msg.startswith("UNIMPLEMENTED: ") and "'nosuch' (args.provider)" in msg, msg[:300]


# ---- mistakes: raised in Python, before anything runs --------------------------------------


@pytest.mark.parametrize("call", [
    lambda m: mj.potrs(jnp.zeros((0, 0)), jnp.zeros(0), mesh=m),
    lambda m: mj.potri(jnp.zeros((0, 0)), mesh=m),
    lambda m: mj.syevd(jnp.zeros((0, 0)), mesh=m),
    lambda m: mj.lu_solve(jnp.zeros((0, 0)), jnp.zeros(0), mesh=m),
    lambda m: ml.solve(jnp.zeros((0, 0)), jnp.zeros(0), mesh=m),
    lambda m: ml.eigh(jnp.zeros((0, 0)), mesh=m),
])
def test_empty_matrix(cpu_mesh4, call):
    with pytest.raises(ValueError, match=r"a has shape \(0, 0\): muster needs N >= 1"):
        call(cpu_mesh4)


@pytest.mark.parametrize("T_A,exc,msg", [
    (2.0, TypeError, r"T_A must be an int or None .* got 2\.0 \(float\); pass e\.g\. T_A=2"),
    ("2", TypeError, r"T_A must be an int or None"),
    (True, TypeError, r"T_A must be an int or None"),
    (0, ValueError, r"T_A must be >= 1 or None"),
])
def test_tile_type(cpu_mesh4, T_A, exc, msg):
    for call in (lambda: mj.potrs(jnp.eye(8), jnp.ones(8), T_A=T_A, mesh=cpu_mesh4),
                 lambda: mj.syevd(jnp.eye(8), T_A=T_A, mesh=cpu_mesh4),
                 lambda: ml.solve(jnp.eye(8), jnp.ones(8), T_A=T_A, mesh=cpu_mesh4)):
        with pytest.raises(exc, match=msg):
            call()
    x = mj.potrs(jnp.eye(8), jnp.ones(8), T_A=np.int64(2), mesh=cpu_mesh4)  # a numpy integer is an int
    np.testing.assert_allclose(x, 1.0)


def test_array_likes_accepted_others_refused(mesh4):
    a, b = [[2.0, 0.0], [0.0, 4.0]], [1.0, 1.0]
    np.testing.assert_allclose(mj.potrs(a, b, mesh=mesh4), [0.5, 0.25])
    np.testing.assert_allclose(mj.lu_solve(a, b, mesh=mesh4), [0.5, 0.25])
    np.testing.assert_allclose(ml.solve(a, b, assume_a="pos"), [0.5, 0.25])
    with pytest.raises(TypeError, match="muster_jax.potrs: a must be an array"):
        mj.potrs("eye", b, mesh=mesh4)
    with pytest.raises(TypeError, match="muster_jax.potrs: b must be an array"):
        mj.potrs(a, [[1.0], [1.0, 2.0]], mesh=mesh4)
    with pytest.raises(TypeError, match=r"a has dtype int64, not supported; muster takes .* pass a.astype"):
        mj.potri([[2, 0], [0, 2]], mesh=mesh4)
    with pytest.raises(TypeError, match="provider must be a provider's name"):
        mj.potrs(a, b, mesh=mesh4, provider=3)


def test_mesh_device_order(mesh4):
    devs = mesh4.devices.flat
    rev = jax.make_mesh((4,), ("x",), devices=list(devs)[::-1])
    a = jax.device_put(jnp.eye(8) * 2, NamedSharding(mesh4, P(None, "x")))
    for call in (lambda: mj.potrs(a, jnp.ones(8), mesh=rev), lambda: mj.syevd(a, mesh=rev),
                 lambda: mj.lu_solve(a, jnp.ones(8), mesh=rev), lambda: ml.solve(a, jnp.ones(8), mesh=rev)):
        with pytest.raises(ValueError, match=r"a is not placed on mesh=: its mesh orders them \[.*\], "
                                             r"mesh= orders them .* Pass mesh=a\.sharding\.mesh"):
            call()
    np.testing.assert_allclose(mj.potrs(a, jnp.ones(8), mesh=a.sharding.mesh), 0.5)  # the advice works


CTX = {
    "potrs": lambda a, b, ax: mj.potrs_shardmap_ctx(a, b, axis_name=ax),
    "potri": lambda a, b, ax: mj.potri_shardmap_ctx(a, axis_name=ax),
    "syevd": lambda a, b, ax: mj.syevd_shardmap_ctx(a, axis_name=ax),
    "lu_solve": lambda a, b, ax: mj.lu_solve_shardmap_ctx(a, b, axis_name=ax),
    "least_squares": lambda a, b, ax: mj.least_squares_shardmap_ctx(a, b, axis_name=ax),
}


@pytest.mark.parametrize("name", list(CTX))
def test_shardmap_ctx_outside_or_wrong_axis(mesh4, name):
    f = CTX[name]
    with pytest.raises(ValueError, match=rf"muster_jax.{name}_shardmap_ctx runs inside the body of "
                                         rf"jax.shard_map .* use muster_jax.{name}\(\.\.\., mesh=mesh\)"):
        f(jnp.eye(8), jnp.ones((8, 1)), "x")
    a = jax.device_put(jnp.eye(8) * 2, NamedSharding(mesh4, P(None, "x")))
    body = jax.shard_map(lambda a, b: f(a, b, "y"), mesh=mesh4, in_specs=(P(None, "x"), P(None, None)),
                         out_specs=P(), check_vma=False)
    with pytest.raises(ValueError, match=rf"axis_name='y' is not a mesh axis of the enclosing shard_map "
                                         rf"\(its axes: \('x',\)\); pass axis_name='x'"):
        jax.jit(body)(a, jnp.ones((8, 1)))


def test_jaxmg_v0_block_orientation(mesh4, rng):
    """jaxmg 0.0.x's potrs_no_shardmap: a row block (its own) or a column
    block, told apart by the local shape at trace time; any other shape is
    refused then, saying what fits."""
    a, b = hpd(rng, 8, np.float64), rhs(rng, 8, 1, np.float64)
    ref = np.linalg.solve(a, b)
    for spec in (P("x", None), P(None, "x")):
        ad = jax.device_put(a, NamedSharding(mesh4, spec))
        f = jax.shard_map(lambda a, b: v0.potrs_no_shardmap(a, b, 2), mesh=mesh4,
                          in_specs=(spec, P(None, None)), out_specs=(P(None, None), P(None)), check_vma=False)
        x, status = jax.jit(f)(ad, b)
        assert int(status[0]) == 0 and np.allclose(x, ref)
        g = jax.shard_map(lambda a: v0.potri_no_shardmap(a, 2), mesh=mesh4, in_specs=(spec,),
                          out_specs=(spec, P(None)), check_vma=False)
        inv, _ = jax.jit(g)(ad)
        assert np.allclose(inv, np.linalg.inv(a))
    odd = jax.device_put(np.ones((8, 12)), NamedSharding(mesh4, P(None, "x")))  # local 8 x 3
    f = jax.shard_map(lambda a, b: v0.potrs_no_shardmap(a, b, 2), mesh=mesh4,
                      in_specs=(P(None, "x"), P(None, None)), out_specs=(P(None, None), P(None)), check_vma=False)
    with pytest.raises(ValueError, match=r"a has local shape \(8, 3\) on 4 devices along 'x': pass this "
                                         r"device's row block"):
        jax.jit(f).trace(odd, b)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: ml.solve(np.eye(4), np.ones(4), assume_a="banded"), ValueError, "assume_a must be one of"),
    (lambda: ml.eigh(np.eye(4), UPLO="X", symmetrize_input=False), ValueError, "UPLO must be 'L' or 'U'"),
    (lambda: ml.lstsq(np.ones((6, 4)), np.ones(6), rcond=1e-3), ValueError, "rcond=0.001 is not supported"),
    (lambda: ml.lstsq(np.ones((3, 4)), np.ones(3)), ValueError, r"M >= N"),
    (lambda: ml.slogdet(np.eye(4), method="qr"), ValueError, "pass method=None"),
    (lambda: ml.solve(np.eye(4, dtype=np.float16), np.ones(4, np.float16)), TypeError, "float16"),
    (lambda: ml.solve(np.ones((2, 4, 4)), np.ones(4)), ValueError, r"a has batch dimensions \(2,\), so b must be"),
    (lambda: ml.lstsq(np.ones((2, 6, 4)), np.ones((2, 6))), ValueError, "jax.vmap"),
    (lambda: ml.solve(np.eye(4), np.ones(5)), ValueError, r"b must be \(4,\) or \(4, k\)"),
    (lambda: ml.cho_solve(jax.scipy.linalg.cho_factor(np.eye(4)), np.ones(4)), TypeError,
     "jax.scipy.linalg.cho_solve"),
])
def test_linalg_mistakes(cpu_mesh4, call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()
