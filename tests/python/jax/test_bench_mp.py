"""The multi-process benchmark (bench_mp_gpu.py, issue 24) end to end on the
CPU: 2 jax.distributed processes on host devices, n = 64, the store path's
columns on the collective test engine colllapack (LAPACKE on all of A
gathered: no real collective engine runs on the CPU), the one-node path on
lapack, the default choice; jaxmg not installed.  The JSON must hold every
requested row with a positive median and a passing check, a row too large
for the budget must be skipped, not run, and the table script must render
it (a wrong answer as WRONG, never as a time).  The checks themselves are
held to a wrong answer in-process (bench_mp_matrix with a one-process
store)."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE))
import bench_mp_matrix as mx  # noqa: E402

ROWS = (("potrs", 64), ("syevd", 64), ("getrs", 64))
MUSTER_COLUMNS = ("mp", "mp_grid", "onenode", "default")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One run of the launcher: (its output, exit status, the JSON path)."""
    tmp = tmp_path_factory.mktemp("benchmp")
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    for routine in ("potrs", "getrs", "syevd"):  # colllapack beside the build's providers
        (tmp / routine).mkdir()
        (tmp / routine / "colllapack.so").symlink_to(build / "tests" / "providers" / "testprov_colllapack.so")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=1",
               MUSTER_PROVIDER_PATH=f"{tmp}:{build / 'lib' / 'muster' / 'providers'}",
               PYTHONPATH=os.pathsep.join([str(REPO / "adapters" / "jax"), os.environ.get("PYTHONPATH", "")]))
    env.pop("JAXMG_SITE", None)
    out = tmp / "bench.json"
    rows = ",".join(f"{r}:{n}" for r, n in ROWS) + ",potrs:1048576"  # the last: far over the budget
    p = subprocess.run([sys.executable, str(HERE / "bench_mp_gpu.py"), "--platform", "cpu", "--gpus", "2",
                        "--rows", rows, "--mp-provider", "colllapack", "--json", str(out), "--budget", "90",
                        "--reps", "2"], env=env, capture_output=True, text=True, timeout=150)
    return p.stdout + p.stderr, p.returncode, out


def test_every_row_timed_and_checked(run):
    text, rc, path = run
    assert rc == 0, text[-4000:]
    doc = json.loads(path.read_text())
    assert doc["bench"] == "muster-jax-mp-bench" and doc["versions"]["muster"] and doc["versions"]["jax"]
    assert not doc["launches"][0]["killed_at_budget"] and doc["launches"][0]["exits"] == [0, 0]
    rows = {(r["routine"], r["n"], r["gpus"]): r for r in doc["rows"]}
    for routine, n in ROWS:
        cols = rows[(routine, n, 2)]["columns"]
        for name in MUSTER_COLUMNS:
            c = cols[name]
            assert c["ran"] and c["seconds"] > 0 and len(c["times"]) == 2 and c["resid_ok"], (routine, name, c)
            ratios = c["resid"] if isinstance(c["resid"], list) else [c["resid"]]
            assert all(r is not None and 0 <= r < mx.WRONG for r in ratios), (routine, name, c["resid"])
        # the default weighs the one-node engines too on one node (the one-node
        # route, docs/one-node-route.md): lapack or colllapack, whichever its
        # tables say is faster here
        assert cols["default"]["provider"] in ("colllapack", "lapack"), cols["default"]
        assert cols["onenode"]["provider"] == "lapack", cols["onenode"]
        if importlib.util.find_spec("jaxmg") is None:
            assert cols["jaxmg"] == {"ran": False, "skipped": "jaxmg: not installed"}, cols["jaxmg"]
    big = rows[("potrs", 1048576, 2)]["columns"]
    assert all(not big[c]["ran"] and big[c]["skipped"].startswith("budget:") for c in MUSTER_COLUMNS), big


def test_table_renders(run):
    """tools/plot_gpu_bench.py --markdown hands this bench's JSON to
    tools/mp_bench_table.py; a column whose check failed shows WRONG."""
    _, _, path = run
    script = REPO / "tools" / "plot_gpu_bench.py"
    p = subprocess.run([sys.executable, str(script), "--markdown", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for routine, n in ROWS:
        row = next(x for x in lines if x.startswith(f"| {routine} | {n} | 2 |"))
        assert "jaxmg: not installed" in row or importlib.util.find_spec("jaxmg"), row
        assert "(colllapack)" in row and "(lapack)" in row, row
    doc = json.loads(path.read_text())
    doc["rows"][0]["columns"]["onenode"]["resid_ok"] = False
    bad = path.with_name("bad.json")
    bad.write_text(json.dumps(doc))
    p = subprocess.run([sys.executable, str(script), "--markdown", str(bad)], capture_output=True, text=True)
    row = next(x for x in p.stdout.splitlines() if x.startswith("| potrs | 64 | 2 |"))
    header = next(x for x in p.stdout.splitlines() if x.startswith("| routine"))
    onenode = [c.strip() for c in header.split("|")].index("one-node path (chose)")
    assert row.split("|")[onenode].strip() == "WRONG", row
    doc["rows"][0]["columns"]["onenode"]["seconds"] = -1.0
    bad.write_text(json.dumps(doc))
    p = subprocess.run([sys.executable, str(script), "--markdown", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and "not positive" in p.stderr, p.stderr


class OneProcess:
    """A store set of one process, for the checks without a job."""

    def allgather(self, mine: bytes) -> list:
        return [mine]


@pytest.mark.parametrize("kind", ["spd", "gen"])
def test_check_solve_refuses_a_wrong_x(kind, rng):
    n, dev = 48, jax.devices("cpu")[0]
    a = np.asarray(mx.block(kind, n, 5, 0, 0, n, n, dev))
    b = np.asarray(mx.rhs(n, 2, 5, 0, n, dev))
    assert kind == "gen" or np.allclose(a, a.T)
    x = np.linalg.solve(a, b)
    one = lambda x: [(slice(0, n), slice(0, 2), x)]  # noqa: E731
    assert mx.check_solve(OneProcess(), kind, n, 5, 2, one(x), 0, 1, dev)["ok"]
    x[rng.integers(n), 1] *= 1 + 1e-9  # one entry off by 1e-9: far above n eps
    assert not mx.check_solve(OneProcess(), kind, n, 5, 2, one(x), 0, 1, dev)["ok"]


def test_check_eig_refuses_a_wrong_pair(rng):
    n, dev = 48, jax.devices("cpu")[0]
    a = np.asarray(mx.block("spd", n, 9, 0, 0, n, n, dev))
    w, v = np.linalg.eigh(a)
    pieces = lambda w, v: ([(slice(0, n), slice(0, 1), w[:, None])], [(slice(0, n), slice(0, n), v)])  # noqa: E731
    assert mx.check_eig(OneProcess(), n, 9, *pieces(w, v), 0, 1, dev)["ok"]
    j = rng.choice(mx.sample_cols(n, 9))
    v2 = v.copy()
    v2[:, j] = np.roll(v2[:, j], 1)  # a sampled eigenvector wrong
    assert not mx.check_eig(OneProcess(), n, 9, *pieces(w, v2), 0, 1, dev)["ok"]
    w2 = w.copy()
    w2[rng.integers(n)] += 1e-8 * abs(w).max()  # one eigenvalue off: the trace shows it
    assert not mx.check_eig(OneProcess(), n, 9, *pieces(w2, v), 0, 1, dev)["ok"]
