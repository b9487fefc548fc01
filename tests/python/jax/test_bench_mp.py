"""The multi-process benchmark (bench_mp_gpu.py, issues 24 and 29) end to
end on the CPU: 2 jax.distributed processes on host devices, n = 64 (gesvd
96 x 64), the store path's columns on the collective test engine
colllapack (LAPACKE on all of A gathered: no real collective engine runs
on the CPU), the one-node path on lapack, the default choice; jaxmg not
installed.  The JSON must hold every requested row with a positive median
and a passing check (gesvd's and polar's 2-D mesh column skipped: grid= is
not for them), a row too large for the budget must be skipped, not run,
and the table script must render it (a wrong answer as WRONG, never as a
time).  --list and --rows are held to the sets' plans without running.
The checks themselves are held to wrong answers in-process
(bench_mp_matrix with a one-process store, and times() with two threads
as two processes)."""
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
import threading
import time

import jax
import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE))
import bench_mp_gpu as bench  # noqa: E402
import bench_mp_matrix as mx  # noqa: E402

ROWS = (("potrs", 64, 64), ("syevd", 64, 64), ("getrs", 64, 64), ("gesvd", 96, 64), ("polar", 64, 64))
MUSTER_COLUMNS = ("mp", "mp_grid", "onenode", "default")


def rows_arg(rows):
    return ",".join(f"{r}:{n}" if m == n else f"{r}:{m}x{n}" for r, m, n in rows)


def label(m, n):
    return str(n) if m == n else f"{m}x{n}"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One run of the launcher: (its output, exit status, the JSON path)."""
    tmp = tmp_path_factory.mktemp("benchmp")
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    for routine in ("potrs", "getrs", "syevd", "gesvd", "polar"):  # colllapack beside the build's providers
        (tmp / routine).mkdir()
        (tmp / routine / "colllapack.so").symlink_to(build / "tests" / "providers" / "testprov_colllapack.so")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=1",
               MUSTER_PROVIDER_PATH=f"{tmp}:{build / 'lib' / 'muster' / 'providers'}",
               PYTHONPATH=os.pathsep.join([str(REPO / "adapters" / "jax"), os.environ.get("PYTHONPATH", "")]))
    env.pop("JAXMG_SITE", None)
    out = tmp / "bench.json"
    rows = rows_arg(ROWS) + ",potrs:1048576"  # the last: far over the budget
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
    rows = {(r["routine"], r["m"], r["n"], r["gpus"]): r for r in doc["rows"]}
    for routine, m, n in ROWS:
        row = rows[(routine, m, n, 2)]
        cols = row["columns"]
        assert row["nrhs"] == (0 if routine in bench.FACTORS else 1), row
        for name in MUSTER_COLUMNS:
            c = cols[name]
            if name == "mp_grid" and routine in bench.FACTORS:
                assert c == {"ran": False, "skipped": f"not for {routine}: grid= is for potrs, getrs, syevd"}, c
                continue
            assert c["ran"] and c["seconds"] > 0 and len(c["times"]) == 2 and c["resid_ok"], (routine, name, c)
            ratios = c["resid"] if isinstance(c["resid"], list) else [c["resid"]]
            assert len(ratios) == {"gesvd": 4, "polar": 3, "syevd": 3}.get(routine, 1), (routine, name, ratios)
            assert all(r is not None and 0 <= r < mx.WRONG for r in ratios), (routine, name, c["resid"])
            mem = c["memory_before"]  # each process's memory before the column (bench_mp_worker.memory)
            assert len(mem) == 2 and all(isinstance(x, dict) for x in mem), (routine, name, mem)
        # the default weighs the one-node engines too on one node (the one-node
        # route, docs/one-node-route.md): lapack or colllapack, whichever its
        # tables say is faster here
        assert cols["default"]["provider"] in ("colllapack", "lapack"), cols["default"]
        assert cols["onenode"]["provider"] == "lapack", cols["onenode"]
        # the engine's own seconds beside the call's: the one-node path's last
        # timed call (and its muster_solve_named), the default's warm eager call
        one = cols["onenode"]
        assert 0 < one["engine_seconds"] <= one["solve_seconds"] < 30, one
        assert cols["default"]["engine_seconds"] > 0, cols["default"]
        if importlib.util.find_spec("jaxmg") is None:
            assert cols["jaxmg"] == {"ran": False, "skipped": "jaxmg: not installed"}, cols["jaxmg"]
    big = rows[("potrs", 1048576, 1048576, 2)]["columns"]
    assert all(not big[c]["ran"] and big[c]["skipped"].startswith("budget:") for c in MUSTER_COLUMNS), big


def test_table_renders(run):
    """tools/plot_gpu_bench.py --markdown hands this bench's JSON to
    tools/mp_bench_table.py; a column whose check failed shows WRONG."""
    _, _, path = run
    script = REPO / "tools" / "plot_gpu_bench.py"
    p = subprocess.run([sys.executable, str(script), "--markdown", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for routine, m, n in ROWS:
        row = next(x for x in lines if x.startswith(f"| {routine} | {label(m, n)} | 2 |"))
        assert "jaxmg: not installed" in row or importlib.util.find_spec("jaxmg"), row
        assert "(colllapack)" in row and "(lapack)" in row, row
        assert ("- (not for %s)" % routine in row) == (routine in bench.FACTORS), row
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


def test_table_merges_a_file_without_m(tmp_path):
    """A file written before gesvd and polar (its rows have no m) renders,
    and merges with a later one whose rows say m = n: one row each."""
    old = REPO / "docs" / "performance" / "data" / "bench-mp-4xh200-2026-11-27.json"
    doc = json.loads(old.read_text())
    assert all("m" not in r for r in doc["rows"])
    for r in doc["rows"]:
        r["m"] = r["n"]
        r["columns"]["mp"]["seconds"] = 123.0
    new = tmp_path / "new.json"
    new.write_text(json.dumps(doc))
    p = subprocess.run([sys.executable, str(REPO / "tools" / "plot_gpu_bench.py"), "--markdown", str(old), str(new)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    body = [x for x in p.stdout.splitlines() if x.startswith("| potrs | 16384 | 4 |")]
    assert len(body) == 1 and "| 123.0000 s |" in body[0], p.stdout


def _list(*args):
    p = subprocess.run([sys.executable, str(HERE / "bench_mp_gpu.py"), "--list", *args], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_list_factors_set():
    """--set factors: gesvd and polar on 1, 2 and 4 GPUs, cusolverdn on the
    1-GPU launch only (unless --columns asks for it), each row's estimate
    positive; issue 24's set stays the default."""
    out = _list("--set", "factors", "--together")
    heads = [x for x in out.splitlines() if "GPUs (" in x]
    assert heads == [f"{g} GPUs ({m} mesh), columns {c}: " + x.split(": ")[1] for (g, m, c), x in zip(
        [(1, "1x1", "mp,default,dn"), (1, "1x1", "jaxmg"), (2, "2x1", "mp,default"), (2, "2x1", "jaxmg"),
         (4, "2x2", "mp,default"), (4, "2x2", "jaxmg")], heads)], out
    for label_ in ("gesvd 4096", "gesvd 8192", "gesvd 16384x8192", "polar 4096", "polar 8192"):
        assert out.count(f"  {label_}: ") == 6, (label_, out)
    first = next(x for x in out.splitlines() if x.startswith("  gesvd 8192: "))
    assert [float(v.split()[1]) > 0 for v in first.split(": ")[1].split(", ")] == [True] * 3, first
    out = _list("--set", "factors", "--gpus", "4", "--columns", "mp,mp_grid,dn", "--rows", "gesvd:8192")
    assert "4 GPUs (2x2 mesh), columns mp,mp_grid,dn" in out and "mp_grid -" in out, out
    assert "potrs 16384" in _list() and "gesvd" not in _list(), _list()


@pytest.mark.parametrize("text, rows", [
    ("gesvd:8192", [("gesvd", 8192, 8192)]),
    ("gesvd:16384x8192,polar:4096", [("gesvd", 16384, 8192), ("polar", 4096, 4096)]),
    ("polar", [("polar", 4096, 4096), ("polar", 8192, 8192)]),
    ("syevd", [("syevd", 8192, 8192), ("syevd", 16384, 16384)]),
    ("", list(bench.ROWS)),
])
def test_parse_rows(text, rows):
    assert bench.parse_rows(text) == rows


@pytest.mark.parametrize("text", ["polar:4096x8192", "potrs:64x32", "gesvd:0", "gesvd:8x", "qr:64"])
def test_parse_rows_refuses(text):
    with pytest.raises(ValueError):
        bench.parse_rows(text)


def _svd(m, n, seed):
    dev = jax.devices("cpu")[0]
    a = np.asarray(mx.block("rand", n, seed, 0, 0, m, n, dev))
    return dev, a, *np.linalg.svd(a, full_matrices=False)


@pytest.mark.parametrize("m", [40, 60])
def test_check_svd_refuses_a_wrong_factor(m, rng):
    n, seed = 40, 11
    dev, a, u, s, vh = _svd(m, n, seed)
    k = min(m, n)

    def ok(u, s, vh):
        # U as a column block and a whole replica (times() must count it once), V^H whole
        pu = [(slice(0, m), slice(0, 10), u[:, :10]), (slice(0, m), slice(0, k), u)]
        pv = [(slice(0, k), slice(0, n), vh)]
        return mx.check_svd(OneProcess(), "rand", m, n, seed, pu, [(slice(0, k), slice(0, 1), s[:, None])], pv, 0,
                            1, dev)["ok"]
    assert ok(u, s, vh)
    j = rng.integers(k)
    u2 = u.copy()
    u2[:, j] *= -1  # one pair's sign broken: A = U S V^H no more
    assert not ok(u2, s, vh)
    s2 = s.copy()
    s2[j] += 1e-9 * s[0]  # one singular value off (relative to ||A||: the check is a backward error's)
    assert not ok(u, s2, vh)
    i = mx.sample_cols(k, seed + 1)[1]
    u3, s3 = u.copy(), s.copy()
    u3[:, i] *= 1 + 1e-9  # U S unchanged, U's sampled column no longer of norm 1
    s3[i] /= 1 + 1e-9
    assert not ok(u3, s3, vh)
    p = np.arange(k)
    p[[0, 1]] = [1, 0]  # the two largest swapped, vectors with them: a true SVD, not descending
    assert not ok(u[:, p], s[p], vh[p])


def test_check_polar_refuses_a_wrong_factor(rng):
    m, n, seed = 56, 40, 12
    dev, a, u, s, vh = _svd(m, n, seed)
    up, h = u @ vh, (vh.T * s) @ vh

    def ok(up, h):
        # U_p as two row blocks, H as four 2-D blocks
        pu = [(slice(0, 30), slice(0, n), up[:30]), (slice(30, m), slice(0, n), up[30:])]
        ph = [(slice(r, r + 20), slice(c, c + 20), h[r:r + 20, c:c + 20]) for r in (0, 20) for c in (0, 20)]
        return mx.check_polar(OneProcess(), "rand", m, n, seed, pu, ph, 0, 1, dev)["ok"]
    assert ok(up, h)
    assert not ok(-up, -h)  # A = U_p H still, U_p orthonormal, H symmetric: not semidefinite
    h2 = h.copy()
    h2[rng.integers(n), rng.choice(mx.sample_cols(n, seed))] += 1e-9 * np.abs(h).max()  # in a sampled column
    assert not ok(up, h2)
    up2 = up.copy()
    up2[:, mx.sample_cols(n, seed)[2]] *= 1 + 1e-9
    assert not ok(up2, h)


class ThreadStore:
    """One end of a store set whose ranks are threads of this process."""

    def __init__(self, slots, barrier, rank):
        self.slots, self.barrier, self.rank = slots, barrier, rank

    def allgather(self, mine: bytes) -> list:
        self.slots[self.rank] = mine
        self.barrier.wait()
        got = list(self.slots)
        self.barrier.wait()
        return got


def test_times_counts_each_entry_once(rng):
    """Two 'processes': each its column block of M and a whole replica;
    both must get M z, each entry counted once; an entry held by no one
    is an error on both."""
    m, k = 30, 20
    mat, z = rng.standard_normal((m, k)), rng.standard_normal((k, 3))
    pieces = [[(slice(0, m), slice(0, 10), mat[:, :10]), (slice(None), slice(None), mat)],
              [(slice(0, m), slice(10, k), mat[:, 10:])]]
    holes = [[(slice(0, m), slice(0, 10), mat[:, :10])], [(slice(0, 20), slice(10, k), mat[:20, 10:])]]
    for given, want in ((pieces, "ok"), (holes, "no process holds 100 entries")):
        slots, barrier, got = [None, None], threading.Barrier(2, timeout=20), [None, None]

        def run(me, given=given, slots=slots, barrier=barrier, got=got):
            try:
                got[me] = mx.times(ThreadStore(slots, barrier, me), given[me], m, k, z, me)
            except Exception as e:  # noqa: BLE001 - the other thread's broken barrier too
                got[me] = f"{type(e).__name__}: {e}"
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        for g in got:
            if want == "ok":
                assert np.allclose(g, mat @ z, rtol=1e-13, atol=1e-13), g
            else:
                assert isinstance(g, str) and want in g, g


def test_list_rows_in_fresh_processes():
    """By default each of muster's rows runs in processes of its own (no row
    meets the caches the rows before it left), and each column of a row
    whose piece of A is 8 GiB or more a process (potrs 65536 on 2 and 4
    GPUs) too; jaxmg's rows share one launch per GPU count; --together
    puts muster's rows in one too."""
    for gpus in (2, 4):
        heads = [x for x in _list("--gpus", str(gpus)).splitlines() if "GPUs (" in x]
        assert len(heads) == len(bench.SETS["issue24"][0]) + 3 + 1, heads
        alone = [x for x in heads if "columns mp,mp_grid,onenode,default" not in x]
        assert [x.split("columns ")[1].split(":")[0] for x in alone] == ["mp", "mp_grid", "onenode", "default",
                                                                          "jaxmg"], heads
    lines = _list("--gpus", "2").splitlines()
    at = [i for i, x in enumerate(lines) if "columns onenode:" in x]
    assert len(at) == 1 and lines[at[0] + 1].strip().startswith("potrs 65536: onenode"), lines
    heads = [x for x in _list("--gpus", "8").splitlines() if "GPUs (" in x]
    assert len(heads) == len(bench.SETS["issue24"][0]) + 1, heads  # 4 GiB a process: no row split
    heads = [x for x in _list("--gpus", "2", "--together").splitlines() if "GPUs (" in x]
    assert len(heads) == 2, heads


def test_verdict_names_what_is_missing():
    """The goal column says which time a row lacks: muster's (every muster
    column failed, as potrs 65536 on 2 x H200 on 2026-11-27), jaxmg's or
    the default's; a row with all three is met or missed by its ratios."""
    sys.path.insert(0, str(REPO / "tools"))
    import mp_bench_table as t
    ok = lambda s: dict(ran=True, seconds=s, resid_ok=True)  # noqa: E731
    bad = dict(ran=False, failed="out of memory")
    row = lambda **c: dict(columns=c)  # noqa: E731
    assert t.verdict(row(mp=bad, onenode=bad, default=bad, jaxmg=ok(2.0)))[2] == "open: no muster time"
    assert t.verdict(row(mp=ok(1.0), default=ok(1.0), jaxmg=bad))[2] == "open: no jaxmg time"
    assert t.verdict(row(mp=ok(1.0), default=bad, jaxmg=ok(2.0)))[2] == "open: no default time"
    assert t.verdict(row(mp=ok(1.0), default=ok(1.01), jaxmg=ok(2.0))) == ("0.50", "1.01", "met")
    assert t.verdict(row(mp=ok(1.0), default=ok(1.2), jaxmg=ok(2.0)))[2] == "**missed**: default 20.0% over mp"


def test_hung_launch_cut_at_its_cap_with_stacks(tmp_path, monkeypatch, capsys):
    """A launch that outlives its cap (3 x its estimate + 60 s; here 4 s)
    is killed, each process having first printed its Python stacks on
    SIGUSR1, and is recorded as cut at its cap, not at the budget's end
    (2026-11-27, 2 x H200: one hung column took the whole budget)."""
    monkeypatch.setattr(bench, "launch_cap", lambda *a: 4.0)
    args = bench.options(["--platform", "cpu", "--gpus", "2", "--rows", "potrs:64", "--json",
                          str(tmp_path / "b.json")])
    spec_rows = [dict(routine="potrs", m=64, n=64, nrhs=1, seed=1, grid_shape=(2, 1))]
    env = dict(os.environ, MUSTER_BENCH_TEST_HANG="1",
               PYTHONPATH=os.pathsep.join([str(REPO / "adapters" / "jax"), os.environ.get("PYTHONPATH", "")]))
    t0 = time.monotonic()
    rec = bench.launch(2, spec_rows, ["mp"], args, time.time() + 600, env, str(tmp_path))
    took = time.monotonic() - t0
    out = capsys.readouterr().out
    assert rec["killed_at_cap"] and not rec["killed_at_budget"], rec
    assert all(rc == -9 for rc in rec["exits"]), rec
    assert took < 20, took
    assert out.count("hang_for_test") >= 2, out[-3000:]  # both processes' stacks name where they waited


def test_route_phases_of_every_process_shown(tmp_path):
    """Under MUSTER_LOG=debug the launcher shows every process's one-node
    route line (comm_local.c: staging and engine milliseconds of each
    call), not process 0's alone: process 0 is the leader's process and
    stages nothing, the others' staging is what a GPU run must see."""
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=1", MUSTER_LOG="debug",
               MUSTER_PROVIDER_PATH=str(build / "lib" / "muster" / "providers"),
               PYTHONPATH=os.pathsep.join([str(REPO / "adapters" / "jax"), os.environ.get("PYTHONPATH", "")]))
    env.pop("JAXMG_SITE", None)
    p = subprocess.run([sys.executable, str(HERE / "bench_mp_gpu.py"), "--platform", "cpu", "--gpus", "2",
                        "--rows", "potrs:64", "--columns", "mp", "--mp-provider", "lapack", "--reps", "1",
                        "--json", str(tmp_path / "b.json"), "--budget", "60"], env=env, capture_output=True,
                       text=True, timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    assert re.search(r"\[2 GPUs\] .*rank 0: one-node route on lapack: nothing staged, muster_solve ", out), out[-4000:]
    assert re.search(r"\[2 GPUs\] process 1: .*rank 1: one-node route on lapack: staged in [0-9.e+-]+ GB in "
                     r"[0-9.]+ ms \(A back: no\)", out), out[-4000:]
