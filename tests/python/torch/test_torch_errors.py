"""Errors as torch users expect them (docs/errors.md, by kind), never a hang,
never a crash: dtypes and shapes, a matrix that is not positive definite,
NaN, a provider that does not exist, ranks that disagree, a missing peer
(TimeoutError), a killed rank (the survivors raise within 2 s), and nothing
left in /dev/shm."""
import os
import pathlib
import signal
import time

import pytest
import torch

import muster_torch as mt
import torch_util as tu
from test_torch_dist import kill_all, results, start

F64 = torch.float64


def test_wrong_dtypes_are_type_errors():
    a = torch.eye(4)
    with pytest.raises(TypeError, match="dtype torch.int64 not supported"):
        mt.potrs([torch.eye(4, dtype=torch.int64)], torch.ones(4, dtype=torch.int64))
    with pytest.raises(TypeError, match="shard 1 is torch.float64"):
        mt.potri([a[:, :2], a[:, 2:].double()])
    with pytest.raises(TypeError, match="b is torch.float64, A is torch.float32"):
        mt.potrs([a], torch.ones(4, dtype=F64))
    with pytest.raises(TypeError):
        mt.syevd("not a tensor")


def test_bad_shapes_are_value_errors():
    a = torch.eye(6, dtype=F64)
    with pytest.raises(ValueError, match="hold 5 columns"):
        mt.potri([a[:, :3], a[:, 3:5]])
    with pytest.raises(ValueError, match="b must be"):
        mt.potrs([a], torch.ones(5, 1, dtype=F64))
    with pytest.raises(ValueError, match="2-D column block"):
        mt.potri([torch.ones(6, dtype=F64)])
    # widths that add up but are not the block layout: the runtime's check
    with pytest.raises(ValueError, match="block layout") as e:
        mt.potri([a[:, :2], a[:, 2:]])
    assert e.value.kind == "invalid_argument" and isinstance(e.value, mt.MusterError)


@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_not_positive_definite_is_linalg_error(dtype):
    A = torch.eye(8, dtype=dtype)
    A[5, 5] = -1
    with pytest.raises(torch.linalg.LinAlgError, match="not positive definite") as e:
        mt.potrs(mt.split_columns(A, 2), torch.ones(8, 1, dtype=dtype))
    assert e.value.info == 6 and e.value.kind == "numerical"
    with pytest.raises(torch.linalg.LinAlgError):
        mt.potri(mt.split_columns(A, 4))


def test_nan_is_linalg_error():
    A = torch.eye(4, dtype=F64)
    A[2, 1] = A[1, 2] = float("nan")
    with pytest.raises(torch.linalg.LinAlgError, match="NaN"):
        mt.potrs(mt.split_columns(A, 2), torch.ones(4, 1, dtype=F64))


def test_unknown_provider_is_not_implemented():
    with pytest.raises(NotImplementedError) as e:
        mt.potrs([torch.eye(4, dtype=F64)], torch.ones(4, 1, dtype=F64), provider="nosuch")
    assert e.value.kind == "unimplemented"


def test_error_kinds_cover_every_code():
    """Each runtime code maps to the class docs/errors.md names for its kind."""
    want = {"invalid_argument": ValueError, "numerical": torch.linalg.LinAlgError,
            "deadline_exceeded": TimeoutError, "aborted": RuntimeError,
            "resource_exhausted": MemoryError, "permission_denied": PermissionError,
            "not_found": FileNotFoundError, "unimplemented": NotImplementedError,
            "failed_precondition": RuntimeError, "internal": RuntimeError}
    for code in range(-1, -23, -1):  # through MUSTER_ESINGULAR
        e = mt._lib.error(code, "test")
        assert isinstance(e, want[e.kind]) and isinstance(e, mt.MusterError), (code, e.kind)
        assert e.code == code


def test_store_route_errors_are_kinds_and_value_errors():
    """muster_torch.distributed's errors (StoreSet's, _lib.store_error): the
    class of the code's kind, as the local ops', also a CallError, so the
    ValueError that API raised before; the runtime's message unchanged,
    code, name and kind as docs/errors.md says."""
    import muster_torch.distributed as md
    from muster_torch import _runtime
    lib = mt._lib.runtime()
    for code in range(-1, -23, -1):  # through MUSTER_ESINGULAR
        e = mt._lib.store_error(lib, code)
        local = mt._lib.error(code, "test")
        assert isinstance(e, type(local)) and isinstance(e, md.CallError) and isinstance(e, ValueError), code
        assert (e.code, e.kind, e.info) == (code, local.kind, 0), code
        assert e.name == _runtime.err_name(lib, code) and e.name.startswith("MUSTER_E"), code
        assert str(e) == _runtime.message(lib, code), code
    e = mt._lib.store_error(lib, -2)
    assert type(e).__name__ == "MusterStoreMemoryError" and isinstance(e, MemoryError), type(e).__mro__


def _testprov_dir(tmp):
    """A provider folder with the test provider (testprov) for potrs, and
    lapack (the workers' warm-up call names it: testprov would wait at the
    gate)."""
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    d = pathlib.Path(tmp, "providers", "potrs")
    d.mkdir(parents=True)
    (d / "testprov.so").symlink_to(build / "tests" / "providers" / "testprov_v1.so")
    (d / "lapack.so").symlink_to(build / "lib" / "muster" / "providers" / "lapack.so")
    return str(d.parent)


@pytest.mark.parametrize("nranks", (2, 4))
def test_killed_leader(tmp_path, nranks):
    """SIGKILL rank 0 while its provider runs: every survivor raises a
    RuntimeError (kind aborted) naming rank 0 within 2 s, nothing is left."""
    gate = tmp_path / "gate"
    gate.touch()
    env = {"MUSTER_PROVIDER_PATH": _testprov_dir(tmp_path), "TESTPROV_GATE": str(gate)}
    procs = start(nranks, tmp_path, "wait", env)
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"entering.{r}").exists() for r in range(nranks)):
            assert time.monotonic() < deadline, "workers did not reach the solve"
            time.sleep(0.02)
        time.sleep(0.5)  # everyone inside: the leader waits at the gate
        t_kill = time.monotonic()
        os.kill(procs[0].pid, signal.SIGKILL)
        res = results(procs, tmp_path, timeout=30)
    finally:
        gate.unlink()
        kill_all(procs)
    assert res[0] is None  # killed before writing
    for r in range(1, nranks):
        assert res[r]["raised"] == "MusterRuntimeError", res[r]
        assert "RuntimeError" in res[r]["bases"] and "rank 0" in res[r]["msg"], res[r]
        assert res[r]["t"] - t_kill < 2.0, f"rank {r} raised {res[r]['t'] - t_kill:.2f} s after"


@pytest.mark.parametrize("scenario", ("missing", "missing_first"))
def test_missing_rank_times_out(tmp_path, scenario):
    """A rank that never calls (missing_first: never makes the group's first
    call, whose name broadcast is a torch.distributed collective): the
    others raise TimeoutError after timeout=, not after gloo's 30 minutes."""
    res = results(start(3, tmp_path, scenario), tmp_path, timeout=60)
    for r in (0, 1):
        assert res[r]["raised"] == "MusterTimeoutError", res[r]
        assert "TimeoutError" in res[r]["bases"]
        assert 1.4 < res[r]["elapsed"] < 4.0, res[r]
