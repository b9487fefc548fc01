"""muster_jax across processes against jaxmg, one process per GPU (issue 24's
benchmark; docs/performance/jax-multiprocess.md).

usage: python3 tests/python/jax/bench_mp_gpu.py [--set issue24|factors]
         [--gpus 2,4] [--rows LIST] [--columns LIST] [--reps 3] [--warmup 1]
         [--budget S] [--json FILE] [--list] [--platform cuda|cpu]
         [--mp-provider NAME] [--grid PRxPC] [--jaxmg-tile T] [--seed S]

For each GPU count P, P processes (bench_mp_worker.py) meet over
jax.distributed (coordinator on 127.0.0.1, a free port), one GPU each, and
time every row (routine, n, or m x n; f64, one right-hand side) in every
column:

  mp        muster_jax.distributed.solve, provider cusolvermp (the store
            path), this process's column block, inside jax.jit
  mp_grid   the same on the blocks of a pr x pc mesh, P("pr", "pc"), grid=
  onenode   muster_jax.potrs / lu_solve / syevd / linalg.svd / linalg.polar
            on a mesh of every process's GPU (the one-node CUDA IPC path),
            the engine the runtime chooses
  mg, dn    the same with cusolvermg / cusolverdn forced (on one GPU: dn
            is cusolverDn itself, the baseline of the factors set)
  default   muster_jax.distributed.solve with no provider: the runtime's
            choice (the JSON names the engine it chose)
  jaxmg     jaxmg's potrs / lu_solve / syevd / gesvd / polar on the same
            pr x pc mesh, in processes of their own (JAXMG_SITE on
            PYTHONPATH: the launcher run-bench-mp-gpu.sh sets it); "jaxmg:
            not installed" where it does not import

--set picks the default rows, columns and GPU counts (--rows, --columns,
--gpus override each):
  issue24   potrs 16384 / 32768 / 65536, syevd 8192 / 16384, getrs 16384;
            mp, mp_grid, onenode, default, jaxmg; 2 and 4 GPUs (default)
  factors   gesvd 4096, 8192 and 16384x8192 (thin vectors), polar 4096,
            8192 (issue 29); mp, default, jaxmg, and dn on the 1-GPU
            launch only; 1, 2 and 4 GPUs
A column that cannot run a routine (mp_grid: grid= is for potrs, getrs,
syevd) is recorded as skipped.

The JSON (--json, rewritten after every column, so a run cut short keeps
what it finished; an existing file of this bench is added to) goes to
tools/plot_gpu_bench.py --markdown for the table.  --budget S: rows whose
estimate no longer fits are skipped ("budget: ..."), and the processes are
killed S + 20 s after the start.  A launch is also cut at 3 times its
estimate + 60 s (a hung column costs that, not the whole budget: on
2026-11-27 potrs 65536's one-node column waited out the budget, 495 s);
before the kill every process is sent SIGUSR1, on which it prints every
thread's Python stack (faulthandler), so the log says where it waited.
Exit status: 0; 1 when a column failed or answered wrongly; 2 bad options.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "tools"))
import mp_bench_table  # noqa: E402  (the table; its shape() labels rows here too)
sys.path.insert(0, str(REPO / "tests" / "python"))
from storecase import free_port, stacks  # noqa: E402  (SIGUSR1 to every live worker, then 3 s)

BENCH, SCHEMA = "muster-jax-mp-bench", 1
# rows: (routine, m, n), A m x n (square but for gesvd's and polar's m)
ROWS = (("potrs", 16384, 16384), ("potrs", 32768, 32768), ("potrs", 65536, 65536), ("syevd", 8192, 8192),
        ("syevd", 16384, 16384), ("getrs", 16384, 16384))
FACTOR_ROWS = (("gesvd", 4096, 4096), ("gesvd", 8192, 8192), ("gesvd", 16384, 8192), ("polar", 4096, 4096),
               ("polar", 8192, 8192))
COLUMNS = ("mp", "mp_grid", "onenode", "mg", "dn", "default", "jaxmg")
DEFAULT_COLUMNS = ("mp", "mp_grid", "onenode", "default", "jaxmg")
ROUTINES = ("potrs", "syevd", "getrs", "gesvd", "polar")  # the order of the seeds: append only
FACTORS = ("gesvd", "polar")  # m x n, factors returned
# --set: default rows, columns, GPU counts, and the set's columns run on one GPU only
SETS = {"issue24": (ROWS, DEFAULT_COLUMNS, "2,4", ()),
        "factors": (FACTOR_ROWS, ("mp", "default", "dn", "jaxmg"), "1,2,4", ("dn",))}


def applies(name: str, routine: str) -> str | None:
    """None when the column runs this routine, else why not (the row's
    column is then recorded as skipped, untimed)."""
    if name == "mp_grid" and routine in FACTORS:
        return f"not for {routine}: grid= is for potrs, getrs, syevd"
    return None


def estimate(routine: str, n: int, gpus: int, column: str, warmup: int, reps: int, m: int | None = None) -> float:
    """Seconds one column of one row should take on H200s: scaled from the
    medians of docs/performance (cusolvermp potrs 32768: 0.24 s on 2 GPUs,
    0.17 s on 4; syevd 8192: 1.5 s; jaxmg's from issue 24), plus the
    first call's setup and the check.  gesvd and polar: the medians of
    4 x H200, 2026-11-28 (jax-multiprocess.md, f64, 8192 square):
    cuSOLVERMp's gesvd 2.14 s (n^1.5, a tall A no longer), its polar 0.87 s
    (n^1.8), the default since taken as cuSOLVERMp's; cusolverDn's gesvd
    and muster's polar on it 9.7 s (n^2.5, a tall m x n A (m - n)/2n more);
    jaxmg's gesvd 4.6 s (n^0.7), its polar 3.5 s (n^0.55); other GPU
    counts taken as 4's.  Rough: for planning and the budget."""
    m = n if m is None else m
    if routine in FACTORS:
        x = n / 8192
        if column in ("dn", "mg", "onenode"):
            t = 9.7 * x ** 2.5 * (1 + (m - n) / (2 * n))
        elif column == "jaxmg":
            t = 4.6 * x ** 0.7 if routine == "gesvd" else 3.5 * x ** 0.55
        else:
            t = 2.14 * x ** 1.5 if routine == "gesvd" else 0.87 * x ** 1.8
    elif routine == "syevd":
        t = 1.5 * (n / 8192) ** 1.6
    else:
        t = (0.25 if gpus <= 2 else 0.18) * (n / 32768) ** 3 * (2.5 if routine == "getrs" else 1.0)
    if routine not in FACTORS:
        t *= {"onenode": 1.3, "mg": 1.4, "dn": 1.5 if routine != "syevd" else 0.7, "jaxmg": 1.6}.get(column, 1.0)
    calls = warmup + reps + (1 if column == "default" else 0)
    return calls * (max(t, 0.02) + 0.05) + 3.0 + m * n / gpus / 2e9


def row_key(r) -> tuple:
    """A row's identity in the JSON: (routine, m, n, GPUs); m is n where
    a row has none (the files before gesvd and polar)."""
    return r["routine"], r.get("m", r["n"]), r["n"], r["gpus"]

shape = mp_bench_table.shape


def grid_of(gpus: int, forced=None):
    """(pr, pc): the forced shape, else the squarest with pr >= pc (P x 1
    for 2: jaxmg's README mesh; 2 x 2 for 4)."""
    if forced:
        return forced
    pc = max(d for d in range(1, int(gpus ** 0.5) + 1) if gpus % d == 0)
    return gpus // pc, pc


# ------------------------------------------------------------------ the JSON
def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path, doc):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def find_row(doc, r):
    return next((x for x in doc["rows"] if row_key(x) == row_key(r)), None)


def put_column(path, r, name, res):
    """Row r's column `name` is res (the row is added when new)."""
    doc = read_json(path)
    row = find_row(doc, r)
    if row is None:
        row = dict({k: v for k, v in r.items() if k != "grid_shape"}, dtype="f64", columns={})
        doc["rows"].append(row)
    row.update({k: r[k] for k in ("seed", "grid", "reps", "warmup")})
    row["columns"][name] = res
    if name not in doc["columns"]:
        doc["columns"].append(name)
    write_json(path, doc)


def _run(cmd, env=None, timeout=60):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout.strip(), p.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, "", str(e)


def jaxmg_env():
    """The environment jaxmg's processes run in: JAXMG_SITE (the wheel and
    cuSOLVERMp 0.9.1 unpacked: run-bench-mp-gpu.sh) ahead on PYTHONPATH."""
    env = dict(os.environ)
    if os.environ.get("JAXMG_SITE"):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ["JAXMG_SITE"], env.get("PYTHONPATH")) if p)
    return env


def header(args):
    """device, driver, date, versions: what the table's heading says."""
    import jax
    import jaxlib
    rc, smi, _ = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    gpus = [line.split(", ") for line in smi.splitlines()] if rc == 0 and smi else []
    build = pathlib.Path(os.environ.get("MUSTER_BUILD", REPO / "build"))
    rc, out, err = _run([str(build / "bin" / "muster"), "providers", "--json"])
    try:
        mp = next(p for p in json.loads(out)["providers"] if p["name"] == "cusolvermp")
        mp = ("available: " + mp["note"]) if mp["available"] else ("unavailable: " + mp["why"])[:300]
    except (ValueError, KeyError, StopIteration):
        mp = f"unknown (muster providers: {err[:200] or out[:200]})"
    rc, jaxmg, err = _run([sys.executable, "-c", "import jaxmg; print(jaxmg.__version__)"], env=jaxmg_env())
    if rc != 0:
        jaxmg = "not installed" if "No module named 'jaxmg'" in err else f"import failed: {err[-300:]}"
    elif os.environ.get("JAXMG_MISSING"):  # the launcher found the wheel but not what it needs to run
        jaxmg = f"{jaxmg} cannot run here: {os.environ['JAXMG_MISSING']}"
    rc, commit, _ = _run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"])
    if rc == 0 and _run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"])[1]:
        commit += "+changes"  # tracked files differ from the commit
    return dict(bench=BENCH, schema=SCHEMA, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                device=gpus[0][0] if gpus else f"{args.platform} (no nvidia-smi)",
                driver=gpus[0][1] if gpus else "none", gpus_available=len(gpus),
                versions=dict(jax=jax.__version__, jaxlib=jaxlib.__version__, python=sys.version.split()[0],
                              muster=commit if rc == 0 and commit else os.environ.get("MUSTER_COMMIT", "unknown"),
                              cusolvermp=mp, jaxmg=jaxmg),
                command=" ".join(sys.argv), dtype="f64", nrhs=1, columns=[], rows=[], launches=[])


# --------------------------------------------------------------- launching
def column_estimate(r, c, gpus, args) -> float:
    """estimate() of row r's column c; 0 for a column that does not apply
    (it runs nothing)."""
    return 0.0 if applies(c, r["routine"]) else estimate(r["routine"], r["n"], gpus, c, args.warmup, args.reps,
                                                          r["m"])


def launch_cap(gpus, rows, cols, args) -> float:
    """Seconds a launch may run: 3 times its columns' estimates, + 60 (the start)."""
    return 3 * sum(column_estimate(r, c, gpus, args) for r in rows for c in cols) + 60


ROUTE_PHASES = ": one-node route on "  # runtime/solve/comm_local.c's debug line of each rank's call


def launch(gpus, rows, cols, args, deadline, env, tmp):
    """P processes run rows x cols; their output streams here (process 0's
    whole, the others' last lines on failure, and their one-node route's
    phase lines under MUSTER_LOG=debug).  The launch's record."""
    spec = dict(rows=rows, columns=cols, reps=args.reps, warmup=args.warmup, platform=args.platform,
                json=str(args.json), deadline=deadline - 15, timeout=args.timeout, grid=rows[0]["grid_shape"],
                mp_provider=args.mp_provider, jaxmg_tile=args.jaxmg_tile or 256,
                jaxmg_tile_fixed=bool(args.jaxmg_tile))
    path = pathlib.Path(tmp) / f"spec-{gpus}-{cols[0]}.json"
    path.write_text(json.dumps(spec))
    port, t0 = free_port(), time.monotonic()
    procs = [subprocess.Popen([sys.executable, str(HERE / "bench_mp_worker.py"), str(i), str(gpus), str(port),
                               str(path)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(gpus)]
    tails = [deque(maxlen=80) for _ in procs]  # room for a stack dump

    def pump(i, p):
        for line in p.stdout:
            tails[i].append(line.rstrip())
            if i == 0 and not line.startswith("WARNING"):
                print(f"[{gpus} GPUs] {line.rstrip()}", flush=True)
            elif i and ROUTE_PHASES in line:  # MUSTER_LOG=debug: where the others' one-node calls went
                print(f"[{gpus} GPUs] process {i}: {line.rstrip()}", flush=True)
    pumps = [threading.Thread(target=pump, args=(i, p), daemon=True) for i, p in enumerate(procs)]
    for t in pumps:
        t.start()
    cap = time.time() + launch_cap(gpus, rows, cols, args)
    by_cap = cap < deadline + 20  # else the budget's end comes first
    killed, cut_at = False, cap if by_cap else deadline + 20
    for p in procs:
        try:
            p.wait(timeout=max(1.0, cut_at - time.time()))
        except subprocess.TimeoutExpired:
            killed = True
            stacks(procs)
            for q in procs:
                q.kill()
            break
    for p in procs:
        p.wait()
    for t in pumps:
        t.join(timeout=5)
    rcs = [p.returncode for p in procs]
    if killed or any(rcs):
        for i, tail in enumerate(tails):
            print(f"--- [{gpus} GPUs] process {i} (exit {rcs[i]}), last lines:\n" + "\n".join(tail), flush=True)
    return dict(gpus=gpus, columns=cols, rows=len(rows), seconds=round(time.monotonic() - t0, 1), exits=rcs,
                killed_at_budget=killed and not by_cap, killed_at_cap=killed and by_cap)


def parse_rows(text, default=ROWS):
    """[(routine, m, n)] of --rows: ROUTINE (its rows of both sets),
    ROUTINE:N (square) or, for gesvd and polar, ROUTINE:MxN (polar: m >= n)."""
    if not text:
        return list(default)
    out = []
    for item in text.split(","):
        routine, _, size = item.partition(":")
        m, _, n = size.lower().partition("x") if "x" in size.lower() else (size, "", size)
        if routine not in ROUTINES or (size and not (m.isdigit() and n.isdigit() and int(m) > 0 and int(n) > 0)):
            raise ValueError(f"--rows item {item!r}: ROUTINE, ROUTINE:N or ROUTINE:MxN, ROUTINE one of {ROUTINES}")
        if size and int(m) != int(n) and (routine not in FACTORS or (routine == "polar" and int(m) < int(n))):
            raise ValueError(f"--rows item {item!r}: an m x n A is for gesvd, and polar with m >= n")
        out += [(routine, int(m), int(n))] if size else [r for r in ROWS + FACTOR_ROWS if r[0] == routine]
    return out


def options(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", default="issue24", choices=tuple(SETS),
                    help="the default rows, columns and GPU counts: issue 24's (default), or gesvd and polar")
    ap.add_argument("--gpus", default="", help="GPU counts (one process per GPU), e.g. 2,4 (default: the set's)")
    ap.add_argument("--rows", default="", help="ROUTINE[:N or :MxN],...: default the set's rows")
    ap.add_argument("--columns", default="", help=f"of {','.join(COLUMNS)} (default: the set's)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for the whole run (default 480)")
    ap.add_argument("--json", type=pathlib.Path, default=pathlib.Path("bench-mp.json"))
    ap.add_argument("--list", action="store_true", help="print the launches, rows and estimates; run nothing")
    ap.add_argument("--platform", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--mp-provider", default="cusolvermp", help="the collective engine of mp and mp_grid")
    ap.add_argument("--grid", default="", help="PRxPC for mp_grid and jaxmg (default: P x 1, 2 x 2 on 4)")
    ap.add_argument("--jaxmg-tile", type=int, default=0, help="jaxmg's T_A (default: cusolvermp's tile, else 256)")
    ap.add_argument("--together", action="store_true",
                    help="muster's rows of a GPU count in one launch (default: each row in fresh processes, so "
                         "that no row meets the engines' caches and XLA's pool left by the rows before it)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0, help="the store set's timeout (MUSTER_TIMEOUT)")
    args = ap.parse_args(argv)
    rows, cols, gpus, args.one_gpu_cols = SETS[args.set]
    try:
        args.gpu_counts = [int(g) for g in (args.gpus or gpus).split(",")]
        args.row_list = parse_rows(args.rows, rows)
        args.cols = [c for c in args.columns.split(",") if c] if args.columns else list(cols)
        if args.columns:
            args.one_gpu_cols = ()  # asked for: on every GPU count
        bad = [c for c in args.cols if c not in COLUMNS]
        if bad or not args.cols:
            raise ValueError(f"--columns {args.columns!r}: of {','.join(COLUMNS)}")
        args.grid_shape = tuple(int(v) for v in args.grid.lower().split("x")) if args.grid else None
        if args.grid_shape and (len(args.grid_shape) != 2 or
                                any(args.grid_shape[0] * args.grid_shape[1] != g for g in args.gpu_counts)):
            raise ValueError(f"--grid {args.grid}: PRxPC with PR * PC equal to every --gpus count")
        if args.reps < 1 or args.warmup < 1 or min(args.gpu_counts) < 1:
            raise ValueError("--reps, --warmup and --gpus must be at least 1 (a warm-up compiles)")
    except ValueError as e:
        ap.error(str(e))
    return args


BIG_PIECE = 8 << 30  # bytes of A a process holds from which each column of a row gets fresh processes


def big(r, gpus: int) -> bool:
    """Whether each column of row r runs in processes of its own: A's piece
    of a process (f64) at least BIG_PIECE.  XLA's pool keeps its peak for
    the process's life, so a column after another meets the pool that one
    grew (2 x H200, 2026-11-27: potrs 65536's one-node column, third in
    its processes, found 15 GiB free for the tiled engine's 16)."""
    return r["m"] * r["n"] * 8 // gpus >= BIG_PIECE


def plan(args):
    """[(gpus, rows, columns, env name)]: the launches, muster's then jaxmg's
    for each GPU count (the set's one-GPU columns on one GPU only)."""
    out = []
    for g in args.gpu_counts:
        mesh = grid_of(g, args.grid_shape)
        rows = [dict(routine=r, m=m, n=n, gpus=g, nrhs=0 if r in FACTORS else 1, grid=f"{mesh[0]}x{mesh[1]}",
                     grid_shape=mesh, reps=args.reps, warmup=args.warmup,
                     seed=(args.seed * 1000003 + 7 * n + 13 * (m - n) + ROUTINES.index(r)) % (1 << 31))
                for r, m, n in args.row_list]
        muster = [c for c in args.cols if c != "jaxmg" and (g == 1 or c not in args.one_gpu_cols)]
        if muster and args.together:
            out.append((g, rows, muster, "muster"))
        elif muster:  # a row in fresh processes: 2 x H200 ran short of memory after two rows in one (2026-11-27)
            for r in rows:
                out += [(g, [r], [c], "muster") for c in muster] if big(r, g) else [(g, [r], muster, "muster")]
        if "jaxmg" in args.cols:
            out.append((g, rows, ["jaxmg"], "jaxmg"))
    return out


def print_plan(args, launches):
    """--list: the launches, their rows and estimated seconds."""
    total = 0.0
    for g, rows, cols, _ in launches:
        t = 20 + sum(column_estimate(r, c, g, args) for r in rows for c in cols)
        total += t
        print(f"{g} GPUs ({rows[0]['grid']} mesh), columns {','.join(cols)}: about {t:.0f} s")
        for r in rows:
            print(f"  {r['routine']} {shape(r)}: " + ", ".join(
                f"{c} -" if applies(c, r["routine"]) else f"{c} {column_estimate(r, c, g, args):.0f} s" for c in cols))
    print(f"total about {total:.0f} s (budget {args.budget:.0f} s)")


def run(args, launches, doc):
    """Every launch in turn, until the budget's end; each recorded in the JSON."""
    t_end = time.time() + args.budget
    os.environ.setdefault("MUSTER_JOB", f"jbench{os.getpid()}")
    with tempfile.TemporaryDirectory() as tmp:
        for g, rows, cols, kind in launches:
            if args.platform == "cuda" and g > doc["gpus_available"]:
                print(f"# {g} GPUs: this machine has {doc['gpus_available']}: skipped", flush=True)
                continue
            if kind == "jaxmg" and not re.fullmatch(r"[0-9][0-9.]*", doc["versions"]["jaxmg"]):  # no plain version
                for r in rows:
                    put_column(args.json, r, "jaxmg", dict(ran=False, skipped=f"jaxmg: {doc['versions']['jaxmg']}"))
                continue
            rec = launch(g, rows, cols, args, t_end, jaxmg_env() if kind == "jaxmg" else dict(os.environ), tmp)
            d = read_json(args.json)
            d["launches"].append(rec)
            write_json(args.json, d)


def main(argv=None):
    args = options(argv)
    launches = plan(args)
    if args.list:
        print_plan(args, launches)
        return 0
    doc = header(args)
    if args.json.exists():  # add to an earlier part of the table
        old = read_json(args.json)
        if old.get("bench") == BENCH and old.get("schema") == SCHEMA:
            doc.update(rows=old["rows"], columns=old["columns"], launches=old.get("launches", []))
    write_json(args.json, doc)
    print(f"# {doc['device']} x {doc['gpus_available']}, {doc['date']}, {json.dumps(doc['versions'])}", flush=True)
    run(args, launches, doc)
    doc = mp_bench_table.load([str(args.json)])
    print("\n".join(mp_bench_table.markdown(doc)))
    mine = {row_key(r) for _, rows, _, _ in launches for r in rows}
    bad = [(r["routine"], shape(r), r["gpus"], c) for r in doc["rows"] for c, v in r["columns"].items()
           if row_key(r) in mine and (v.get("failed") or (v["ran"] and not v["resid_ok"]))]
    for b in bad:
        print("FAILED or WRONG: %s %s on %d GPUs, column %s" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
