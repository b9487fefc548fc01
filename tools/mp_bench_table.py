"""tools/mp_bench_table.py - the multi-process JAX benchmark's table (issue 24)
from its JSON (tests/python/jax/bench_mp_gpu.py; docs/performance/jax-multiprocess.md).

    python3 tools/plot_gpu_bench.py --markdown BENCH.json [MORE.json ...]

(plot_gpu_bench.py hands this benchmark's files to load() and markdown()
here; its exit statuses hold.)

Several files (one run split into commands) are merged when they come from
the same device: a row is (routine, M, N, GPUs) (M, A's rows, is N where a
row has none; N shows as MxN when they differ), and a later file's column
replaces an earlier one unless it did not run and the earlier one did
(plot_gpu_bench.merge_columns).  Per row: each column's median, the engine
the one-node path and the default chose, jaxmg's, the best muster engine,
muster / jaxmg (best muster over jaxmg) and default / best, and the row
against issue 24's goal (muster ahead of jaxmg, the default within 3% of
the best muster engine).  A column whose check failed shows WRONG, never a
time; a file that is not this bench's JSON raises BenchError.
"""
from plot_gpu_bench import BenchError, _need, merge_columns, read_doc

BENCH, SCHEMA = "muster-jax-mp-bench", 1
ROUTINES = ("potrs", "syevd", "getrs", "gesvd", "polar")
# column -> heading, in the table's order; the muster engines before jaxmg
HEADINGS = {"mp": "store path, column blocks", "mp_grid": "store path, 2-D mesh (grid=)",
            "onenode": "one-node path (chose)", "mg": "one-node, cusolvermg", "dn": "one-node, cusolverdn",
            "default": "default (chose)", "jaxmg": "jaxmg"}
MUSTER = ("mp", "mp_grid", "onenode", "mg", "dn", "default")
GOAL_DEFAULT = 1.03


def _row(row, where):
    for key, kind in (("routine", str), ("n", int), ("gpus", int), ("columns", dict)):
        _need(row, key, kind, where)
    row = dict(row, m=row["n"]) if "m" not in row else row
    _need(row, "m", int, where)
    if row["routine"] not in ROUTINES or row["n"] < 1 or row["m"] < 1 or row["gpus"] < 1:
        raise BenchError("%s: not a row: %s n=%s on %d GPUs" % (where, row["routine"], shape(row), row["gpus"]))
    for name, col in row["columns"].items():
        here = "%s (%s %s, %d GPUs).%s" % (where, row["routine"], shape(row), row["gpus"], name)
        if name not in HEADINGS:
            raise BenchError("%s: unknown column" % here)
        if _need(col, "ran", bool, here):
            if not _need(col, "seconds", (int, float), here) > 0:
                raise BenchError("%s: seconds %r is not positive" % (here, col["seconds"]))
            _need(col, "resid_ok", bool, here)
    return row


def shape(row):
    """N, or MxN where A is m x n with m != n."""
    return str(row["n"]) if row.get("m", row["n"]) == row["n"] else "%dx%d" % (row["m"], row["n"])


def load(paths):
    """The merged report of the files (the first file's facts, rows in
    routine, N, GPUs order).  Raises BenchError."""
    merged, rows = None, {}
    for path in paths:
        doc = read_doc(path, BENCH, SCHEMA)
        _need(doc, "versions", dict, path)
        if merged is None:
            merged = dict(doc, parts=1)
        elif doc["device"] != merged["device"]:
            raise BenchError("%s: %s cannot be merged with %s" % (path, doc["device"], merged["device"]))
        else:
            merged["parts"] += 1
        for i, row in enumerate(_need(doc, "rows", list, path)):
            row = _row(row, "%s: rows[%d]" % (path, i))
            key = (ROUTINES.index(row["routine"]), row["n"], row["m"], row["gpus"])
            rows[key] = dict(row, columns=merge_columns(rows[key]["columns"], row["columns"])) if key in rows else row
    if merged is None:
        raise BenchError("no file given")
    merged["rows"] = [rows[k] for k in sorted(rows)]
    return merged


def good(row, name):
    """The column's median when it ran and its answer was right, else None."""
    col = row["columns"].get(name)
    return col["seconds"] if col and col["ran"] and col["resid_ok"] else None


def best_muster(row):
    """(seconds, column) of the fastest right muster column, or None."""
    ran = [(good(row, c), c) for c in MUSTER if good(row, c) is not None]
    return min(ran) if ran else None


def cell(row, name):
    col = row["columns"].get(name)
    if col is None:
        return "-"
    if not col["ran"]:
        why = col.get("skipped") or "failed"
        return why if why.startswith("jaxmg:") else "- (%s)" % why.split(":")[0]
    if not col["resid_ok"]:
        return "WRONG"
    shown = name in ("onenode", "default") or (name.startswith("mp") and col.get("provider") != "cusolvermp")
    chose = " (%s)" % col.get("provider") if shown and col.get("provider") else ""
    tile = " (T_A %s)" % col["tile"] if name == "jaxmg" and col.get("tile") else ""
    return "%.4f s%s%s" % (col["seconds"], chose, tile)


def verdict(row):
    """(muster / jaxmg, default / best, the row against the goal)."""
    best, jm, default = best_muster(row), good(row, "jaxmg"), good(row, "default")
    vs_jaxmg = best[0] / jm if best and jm else None
    vs_best = default / best[0] if best and default else None
    missed = []
    if vs_jaxmg is not None and vs_jaxmg >= 1:
        missed.append("jaxmg %.0f%% faster" % (100 * (1 / vs_jaxmg - 1)))
    if vs_best is not None and vs_best > GOAL_DEFAULT:
        missed.append("default %.1f%% over %s" % (100 * (vs_best - 1), best[1]))
    if missed:
        goal = "**missed**: " + "; ".join(missed)
    elif vs_jaxmg is None or vs_best is None:
        goal = "open: " + ("no muster time" if not best else "no jaxmg time" if vs_jaxmg is None
                           else "no default time")
    else:
        goal = "met"
    fmt = lambda v: "-" if v is None else "%.2f" % v  # noqa: E731
    return fmt(vs_jaxmg), fmt(vs_best), goal


def markdown(doc):
    """The table of docs/performance/jax-multiprocess.md, as lines."""
    v = doc["versions"]
    names = [c for c in HEADINGS if any(c in r["columns"] for r in doc["rows"])]
    out = ["%s, driver %s, %s; jax %s, muster %s, cuSOLVERMp (the provider's report) %s, jaxmg %s; "
           "f64, 1 right-hand side, one process per GPU; seconds: median of each call's slowest process%s" %
           (doc["device"], doc["driver"], doc["date"], v.get("jax", "?"), v.get("muster", "?"),
            v.get("cusolvermp", "?"), v.get("jaxmg", "?"),
            " (%d files merged)" % doc["parts"] if doc.get("parts", 1) > 1 else ""), "",
           "| routine | N | GPUs | mesh | " + " | ".join(HEADINGS[c] for c in names) +
           " | best muster | muster / jaxmg | default / best | goal |",
           "|" + "---|" * (len(names) + 8)]
    for row in doc["rows"]:
        best = best_muster(row)
        out.append("| %s | %s | %d | %s | %s | %s | %s |" % (
            row["routine"], shape(row), row["gpus"], row.get("grid", "-"), " | ".join(cell(row, c) for c in names),
            best[1] if best else "-", " | ".join(verdict(row))))
    return out

