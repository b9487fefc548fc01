"""Bad input gives the expected exception (never a hang), with the
runtime's message; return_status=True gives the status and NaNs instead."""
import re
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import muster_jax as mj
import muster_jax.distributed as md
from muster_jax import _lib, _runtime
from jaxtest_util import hpd, rhs

RuntimeErr = jax.errors.JaxRuntimeError


def not_pd(n, dt, k):
    """Hermitian, leading minor k+1 not positive definite."""
    a = np.eye(n).astype(dt) * 2
    a[k, k] = -1
    return a


# ---- checks in Python, before anything runs ------------------------------------------


@pytest.mark.parametrize("spec", [P(None, None), P("x", "x")])
def test_bad_a_spec(cpu_mesh4, spec):
    a = jnp.eye(8)
    with pytest.raises(ValueError, match="sharded"):
        mj.potrs(a, jnp.ones((8, 1)), mesh=cpu_mesh4, in_specs=(spec, P(None, None)))
    # one dimension over several axes is taken, when the mesh has them
    with pytest.raises(ValueError, match="no axis 'y'"):
        mj.potrs(a, jnp.ones((8, 1)), mesh=cpu_mesh4, in_specs=(P(("x", "y"), None), P(None, None)))
    with pytest.raises(ValueError, match="named twice"):
        mj.potrs(a, jnp.ones((8, 1)), mesh=cpu_mesh4, in_specs=(P(("x", "x"), None), P(None, None)))


def test_bad_b_spec(cpu_mesh4):
    with pytest.raises(ValueError, match="b must be replicated"):
        mj.potrs(jnp.eye(8), jnp.ones((8, 4)), mesh=cpu_mesh4, in_specs=(P(None, "x"), P(None, "x")))


def test_unknown_axis(cpu_mesh4):
    with pytest.raises(ValueError, match="no axis 'y'"):
        mj.potri(jnp.eye(8), mesh=cpu_mesh4, in_specs=P(None, "y"))


def test_in_specs_shape(cpu_mesh4):
    with pytest.raises(ValueError, match="in_specs"):
        mj.potrs(jnp.eye(8), jnp.ones((8, 1)), mesh=cpu_mesh4, in_specs=P(None, "x"))


def test_not_square_and_shapes(cpu_mesh4):
    with pytest.raises(ValueError, match="square"):
        mj.syevd(jnp.ones((8, 4)), mesh=cpu_mesh4, in_specs=P(None, "x"))
    with pytest.raises(ValueError, match="b must be"):
        mj.potrs(jnp.eye(8), jnp.ones((7, 1)), mesh=cpu_mesh4, in_specs=(P(None, "x"), P(None, None)))


def test_bad_dtype(cpu_mesh4):
    with pytest.raises(TypeError, match="not supported"):
        mj.potri(jnp.eye(8, dtype=jnp.int32), mesh=cpu_mesh4, in_specs=P(None, "x"))
    with pytest.raises(TypeError, match="dtype"):
        mj.potrs(jnp.eye(8), jnp.ones((8, 1), jnp.float32), mesh=cpu_mesh4,
                 in_specs=(P(None, "x"), P(None, None)))


def test_invalid_tile_names_neighbours(cpu_mesh4):
    with pytest.raises(ValueError, match=r"tile 4 invalid for n=32, ranks=4: nearest valid 2 or 8"):
        mj.potrs(jnp.eye(32), jnp.ones((32, 1)), T_A=4, mesh=cpu_mesh4,
                 in_specs=(P(None, "x"), P(None, None)))
    with pytest.raises(ValueError):
        mj.check_T_A(32, 0, 4)


def test_valid_tiles_are_the_runtime_rule():
    for n, r in [(32, 4), (13, 2), (100, 4), (7, 1)]:
        tiles = mj.calculate_all_valid_T_A(n, r)
        assert tiles == sorted(tiles) and tiles[-1] == -(-n // r)  # T = S is always valid
        for t in range(1, -(-n // r) + 1):
            if t in tiles:
                mj.check_T_A(n, t, r)
            else:
                with pytest.raises(ValueError, match="nearest valid"):
                    mj.check_T_A(n, t, r)
    assert mj.calculate_all_valid_T_A(100, 4, T_A_max=7) == [t for t in mj.calculate_all_valid_T_A(100, 4) if t <= 7]


@pytest.mark.parametrize("code,name,kind", [(-1, "MUSTER_EINVAL", "invalid_argument"),
                                             (-2, "MUSTER_ENOMEM", "resource_exhausted"),
                                             (-9, "MUSTER_ETIMEDOUT", "deadline_exceeded"),
                                             (-10, "MUSTER_EPEERDEAD", "aborted"),
                                             (-21, "MUSTER_ENOTPD", "numerical")])
def test_check_raises_call_error_with_the_code(code, name, kind):
    """A failed runtime call in Python (_runtime.check, the store route's
    calls) raises CallError: a ValueError, its text the runtime's message
    as before, carrying the code, its name and kind (docs/errors.md)."""
    lib = _lib.runtime()
    assert _runtime.check(lib, 3) == 3
    with pytest.raises(ValueError) as e:
        _runtime.check(lib, code)
    assert type(e.value) is _runtime.CallError and md.CallError is _runtime.CallError
    assert (e.value.code, e.value.name, e.value.kind, e.value.info) == (code, name, kind, 0)
    assert str(e.value) == _runtime.message(lib, code)


def test_call_error_of_a_real_call():
    """The runtime's own words and code, from a call it refused; a caller's
    wording of them (say) keeps the code."""
    lib = _lib.runtime()
    with pytest.raises(_runtime.CallError, match=r"^muster_layout_block_cols: rank 5 out of 0\.\.1$") as e:
        _runtime.block_cols(lib, 8, 2, 5)
    assert (e.value.code, e.value.name, e.value.kind) == (-1, "MUSTER_EINVAL", "invalid_argument")
    lib.muster_layout_block_cols(8, 0, 0, None, None)  # a fresh message, as the call it follows would leave
    e = _runtime.call_error(lib, -1, lambda m: f"who: {m} (why)")
    assert str(e) == "who: muster_layout_block_cols: ranks=0 out of range (1..64) (why)" and e.name == "MUSTER_EINVAL"


def test_timeout_seconds_refusal_is_call_error(monkeypatch):
    monkeypatch.setenv("MUSTER_TIMEOUT", "soon")
    with pytest.raises(_runtime.CallError, match="MUSTER_TIMEOUT") as e:
        _runtime.timeout_seconds(_lib.runtime(), None)
    assert e.value.kind == "invalid_argument"


def test_cyclic_input_needs_its_width(cpu_mesh4):
    with pytest.raises(ValueError, match="cyclic_1d_layout"):
        mj.potrs(jnp.eye(22), jnp.ones((22, 1)), T_A=2, mesh=cpu_mesh4,
                 in_specs=(P(None, "x"), P(None, None)), cyclic_1d=True)
    with pytest.raises(ValueError, match="T_A"):
        mj.potri(jnp.eye(24), mesh=cpu_mesh4, in_specs=P(None, "x"), cyclic_1d=True)


# ---- failures in the runtime ----------------------------------------------------------------


@pytest.mark.parametrize("dt", [np.float32, np.complex128], ids=lambda d: np.dtype(d).name)
def test_not_positive_definite_raises(mesh4, dt):
    a = not_pd(16, dt, 9)
    with pytest.raises(RuntimeErr, match="not positive definite") as e:
        np.asarray(mj.potrs(jnp.asarray(a), jnp.ones((16, 1), dt), mesh=mesh4,
                            in_specs=(P(None, "x"), P(None, None))))
    assert "muster_jax potrs rank" in str(e.value)
    with pytest.raises(RuntimeErr, match="not positive definite"):
        np.asarray(mj.potri(jnp.asarray(a), mesh=mesh4, in_specs=P(None, "x")))


def test_not_positive_definite_status(mesh4):
    a = not_pd(16, np.float64, 9)
    x, status = mj.potrs(jnp.asarray(a), jnp.ones((16, 2)), mesh=mesh4,
                         in_specs=(P(None, "x"), P(None, None)), return_status=True)
    assert int(status) == 10  # LAPACK info: the leading minor of order 10
    assert np.isnan(np.asarray(x)).all()
    inv, status = mj.potri(jnp.asarray(a), mesh=mesh4, in_specs=P(None, "x"), return_status=True)
    assert int(status) == 10 and np.isnan(np.asarray(inv)).all()


def test_status_zero_on_success(rng, mesh4):
    a = hpd(rng, 12, np.float64)
    w, v, status = mj.syevd(jnp.asarray(a), mesh=mesh4, in_specs=P(None, "x"), return_status=True)
    assert int(status) == 0 and np.isfinite(np.asarray(v)).all()


def test_unknown_provider_message(rng, mesh4):
    a, b = hpd(rng, 8, np.float64), rhs(rng, 8, 1, np.float64)
    with pytest.raises(RuntimeErr, match="nosuchprovider"):
        np.asarray(mj.potrs(jnp.asarray(a), jnp.asarray(b), mesh=mesh4,
                            in_specs=(P(None, "x"), P(None, None)), provider="nosuchprovider"))
    x, status = mj.potrs(jnp.asarray(a), jnp.asarray(b), mesh=mesh4, in_specs=(P(None, "x"), P(None, None)),
                         provider="nosuchprovider", return_status=True)
    assert int(status) < 0 and mj.strerror(int(status)) != ""


# ---- the handler itself: attributes, operands, a missing peer ---------------------------------


def raw_call(a, rank=(0, 0), routine=2, **over):
    """The FFI target called directly, outside shard_map."""
    attrs = dict(routine=np.int32(routine), n=np.int64(a.shape[0]), nrhs=np.int64(0), tile=np.int64(0),
                 layout=np.int32(0), flags=np.int32(0), nranks=np.int32(1), provider="", group_key="",
                 site=np.int64(7), return_status=np.int32(0), process_mode=np.int32(0))
    for k, v in over.items():
        if v is None:
            attrs.pop(k)
        else:
            attrs[k] = v
    outs = [jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct((1,), jnp.int32)]
    call = jax.ffi.ffi_call(_lib.TARGET, outs, input_layouts=[None, (1, 0)], output_layouts=[(1, 0), None],
                            input_output_aliases={1: 0}, has_side_effect=True)
    return call(jnp.asarray(rank, jnp.int32), a, **attrs)


def test_raw_call_works(rng):
    a = hpd(rng, 6, np.float64)
    inv, status = raw_call(jnp.asarray(a))
    assert int(status[0]) == 0
    np.testing.assert_allclose(np.asarray(inv) @ a, np.eye(6), atol=1e-12)


@pytest.mark.parametrize("over,msg", [
    (dict(n=None), "missing attribute n"),
    (dict(bogus=np.int32(1)), "unknown attribute bogus"),
    (dict(n="six"), "attribute n must be an integer"),
    (dict(provider=np.int32(3)), "attribute provider must be a string"),
    (dict(routine=np.int32(9)), "routine 9 unknown"),
    (dict(nranks=np.int32(0)), "nranks 0 out of"),
    (dict(n=np.int64(7)), "at least n=7 rows"),
    (dict(routine=np.int32(1)), "potrs takes 3 operands"),
    (dict(group_key="k" * 60), "group_key is 60 bytes"),
    (dict(nranks=np.int32(4)), "A shard has 6 columns; n=6 on 4 ranks (block layout) needs 2 per rank"),
    (dict(layout=np.int32(1)), "a cyclic input needs its tile"),
    (dict(layout=np.int32(1), tile=np.int64(4)), "A shard has 6 columns; n=6 on 1 ranks (cyclic layout) needs 8"),
])
def test_attribute_errors(over, msg, monkeypatch):
    # a lone instance of a 4-rank group (nranks=4) aborts the group for its
    # peers and waits for them to come, MUSTER_TIMEOUT at most (ffi.c)
    monkeypatch.setenv("MUSTER_TIMEOUT", "0.5")
    with pytest.raises(RuntimeErr, match=re.escape(msg)):
        np.asarray(raw_call(jnp.eye(6), **over)[0])


def test_rank_out_of_range():
    with pytest.raises(RuntimeErr, match="rank 3 out of 0..0"):
        np.asarray(raw_call(jnp.eye(6), rank=(3, 0))[0])


def test_missing_peer_times_out(monkeypatch):
    """nranks=2 but only one instance runs: the runtime's deadline turns the
    wait into an error naming the missing rank; nothing is left in /dev/shm."""
    monkeypatch.setenv("MUSTER_TIMEOUT", "1.5")
    t0 = time.monotonic()
    with pytest.raises(RuntimeErr) as e:
        np.asarray(raw_call(jnp.eye(6)[:, :3], nranks=np.int32(2))[0])
    took = time.monotonic() - t0
    assert took < 15, took
    msg = str(e.value)
    assert "muster_jax potri rank 0/2" in msg and ("timed out" in msg or "missing" in msg), msg


def test_ffi_api_version():
    assert mj.ffi_api_version() == (0, 1)
