#!/usr/bin/env python3
"""tools/plot_gpu_bench.py - the GPU benchmark's table and plot from its JSON.

    python3 tools/plot_gpu_bench.py [-o PLOT.png] [--markdown] BENCH.json [MORE.json ...]

Reads what `muster-gpu-bench --json FILE` writes (schema 1, described in
docs/performance/gpu.md).  Several files (one run split into parts by rows
or by --columns) are merged when they come from the same device and GPU
count: for a row (routine, dtype, N) in more than one, a later file's column
replaces an earlier one unless it did not run and the earlier one did; best
and default / best are then computed again (the bench's rule: the least
median of the columns that ran).

  --markdown  print the table of docs/performance/gpu.md (seconds, '-' for a
              skipped column, the provider the default chose, default / best);
              for files of tests/python/jax/bench_mp_gpu.py, the table of
              docs/performance/jax-multiprocess.md (tools/mp_bench_table.py)
  -o PNG      time against N, log-log, one line per engine, one panel per
              routine and dtype (needs matplotlib)
  --cost NAME print the cost-table rows (docs/choice.md) of provider NAME:
              each potrs/potri/syevd row where a column ran NAME, as
              "routine dtype gpus n nrhs seconds"; files of several GPU counts
  --tflops PNG  potrs's rate, TF/s (potrf's n^3/3 flops, 4x for complex)
              against N, one line per engine and GPU count; files of several
              GPU counts; --peak P (TF/s per GPU) adds 70% of the aggregate
              peak of each count as a dotted line (needs matplotlib)

Exit status: 0; 2 for a file that is not the bench's JSON (the message says
which file and what is wrong); 3 when matplotlib is missing for -o.
Without -o or --markdown the files are only checked.
"""
import argparse
import json
import sys

SCHEMA = 1
ROUTINES = ("potrs", "potri", "syevd")
DTYPES = ("f32", "f64", "c64", "c128")
# engine -> legend label, in the table's order
LABELS = {
    "default": "default (runtime's choice)",
    "cusolverdn": "cusolverdn forced",
    "cusolvermg": "cusolvermg forced",
    "raw_mg": "raw cuSolverMg @ tile",
    "raw_dn": "raw cusolverDn, 1 GPU",
}


class BenchError(Exception):
    """A file that is not the benchmark's JSON."""


def _need(obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        raise BenchError("%s: missing \"%s\"" % (where, key))
    value = obj[key]
    # bool is an int in Python: refuse it where a number is wanted
    if not isinstance(value, kind) or (kind in (int, (int, float)) and isinstance(value, bool)):
        raise BenchError("%s: \"%s\" is %r, not %s" % (where, key, value, getattr(kind, "__name__", "a number")))
    return value


def _column(row, name, where):
    col = _need(row["columns"], name, dict, where)
    ran = _need(col, "ran", bool, where + "." + name)
    if ran:
        secs = _need(col, "seconds", (int, float), where + "." + name)
        if not secs > 0:
            raise BenchError("%s.%s: seconds %r is not positive" % (where, name, secs))
    return col


def _row(row, where, columns):
    routine = _need(row, "routine", str, where)
    dtype = _need(row, "dtype", str, where)
    n = _need(row, "n", int, where)
    if routine not in ROUTINES or dtype not in DTYPES or n < 1:
        raise BenchError("%s: not a row: %s %s n=%r" % (where, routine, dtype, n))
    _need(row, "columns", dict, where)
    for name in columns:
        _column(row, name, "%s (%s %s %d)" % (where, routine, dtype, n))
    return row


def read_doc(path, bench, schema):
    """The JSON of file path, a report of `bench` (schema `schema`) with its
    device, driver and date; else BenchError (also tools/mp_bench_table.py's)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError("%s: %s" % (path, e)) from e
    if _need(doc, "bench", str, path) != bench or _need(doc, "schema", int, path) != schema:
        raise BenchError("%s: not %s schema %d JSON" % (path, bench, schema))
    for key in ("device", "driver", "date"):
        _need(doc, key, str, path)
    return doc


def load(paths):
    """The merged report of the files: a dict with the first file's facts
    and "rows" ordered by routine, dtype and N.  Raises BenchError."""
    merged, rows = None, {}
    for path in paths:
        doc = read_doc(path, "muster-gpu-bench", SCHEMA)
        _need(doc, "gpus", int, path)
        columns = _need(doc, "columns", list, path)
        unknown = [c for c in columns if c not in LABELS]
        if unknown:
            raise BenchError("%s: unknown columns %s" % (path, unknown))
        if merged is None:
            merged = dict(doc)
        elif (doc["device"], doc["gpus"]) != (merged["device"], merged["gpus"]):
            raise BenchError("%s: %d x %s cannot be merged with %d x %s" %
                             (path, doc["gpus"], doc["device"], merged["gpus"], merged["device"]))
        for i, row in enumerate(_need(doc, "rows", list, path)):
            row = _row(row, "%s: rows[%d]" % (path, i), columns)
            key = (ROUTINES.index(row["routine"]), DTYPES.index(row["dtype"]), row["n"])
            rows[key] = merge_row(rows[key], row) if key in rows else rank(dict(row))
    if merged is None:
        raise BenchError("no file given")
    merged["rows"] = [rows[k] for k in sorted(rows)]
    return merged


def merge_columns(old, new):
    """Two parts' columns of one row: new's over old's, except a skipped one
    over one that ran (also tools/mp_bench_table.py's rule)."""
    cols = dict(old)
    for name, col in new.items():
        if col["ran"] or not cols.get(name, {}).get("ran"):
            cols[name] = col
    return cols


def merge_row(old, new):
    """new's columns over old's (merge_columns)."""
    return rank(dict(new, columns=merge_columns(old["columns"], new["columns"])))


def rank(row):
    """Set row's best (first of the least medians, in column order) and
    default_over_best (None when the default did not run)."""
    ran = [(seconds(row, name), name) for name in LABELS if seconds(row, name) is not None]
    best = min(ran, key=lambda t: t[0]) if ran else None
    row["best"] = best[1] if best else None
    default = seconds(row, "default")
    row["default_over_best"] = default / best[0] if best and default is not None else None
    return row


def seconds(row, name):
    """The column's median seconds, or None when it was skipped."""
    col = row["columns"].get(name)
    return col["seconds"] if col and col["ran"] else None


def markdown(doc):
    """The table of docs/performance/gpu.md, as lines."""
    out = ["%d x %s, driver %s, CUDA runtime %s, %s; seconds (median); '-': skipped (reason in the JSON)" %
           (doc["gpus"], doc["device"], doc["driver"], doc.get("cuda_runtime", "?"), doc["date"]), "",
           "| routine | dtype | N | default | chose | cusolverdn | cusolvermg | raw mg @tile | tile | raw dn (1 GPU) "
           "| default / best | best |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in doc["rows"]:
        cols = row["columns"]

        def cell(name):
            s = seconds(row, name)
            if s is None:
                return "-"
            bad = cols[name].get("resid_ok") is False
            return "%.4f%s" % (s, " (WRONG)" if bad else "")

        ratio = row.get("default_over_best")
        out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["routine"], row["dtype"], row["n"], cell("default"),
            cols.get("default", {}).get("provider") or "-", cell("cusolverdn"), cell("cusolvermg"),
            cell("raw_mg"), cols.get("raw_mg", {}).get("tile", "-"), cell("raw_dn"),
            "%.3f" % ratio if isinstance(ratio, (int, float)) else "-", row.get("best") or "-"))
    return out


def plot(doc, out_png):
    """Time against N, log-log, one panel per (routine, dtype)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("matplotlib is needed for -o (pip install matplotlib); --markdown works without it: %s" % e)
    panels = []
    for row in doc["rows"]:
        key = (row["routine"], row["dtype"])
        if key not in panels:
            panels.append(key)
    ncols = min(3, len(panels))
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.0 * nrows), squeeze=False)
    for ax, (routine, dtype) in zip(axes.flat, panels):
        rows = [r for r in doc["rows"] if (r["routine"], r["dtype"]) == (routine, dtype)]
        for name, label in LABELS.items():
            pts = [(r["n"], seconds(r, name)) for r in rows if seconds(r, name) is not None]
            if not pts:
                continue
            default = name == "default"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label,
                    linewidth=2.6 if default else 1.3, color="black" if default else None,
                    linestyle="-" if default or not name.startswith("raw") else "--", zorder=3 if default else 2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title("%s %s" % (routine, dtype))
        ax.set_xlabel("N")
        ax.set_ylabel("seconds (median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle("muster-gpu-bench: %d x %s, driver %s, %s" % (doc["gpus"], doc["device"], doc["driver"], doc["date"]))
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)


def by_gpus(paths):
    """One merged report per GPU count (load()'s rules within a count)."""
    groups = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                gpus = json.load(f).get("gpus")
        except (OSError, ValueError) as e:
            raise BenchError("%s: %s" % (path, e)) from e
        groups.setdefault(gpus, []).append(path)
    return [load(groups[g]) for g in sorted(groups, key=str)]


def engines(row):
    """(engine name, seconds) of the columns that ran, the default column
    named after the provider it ran."""
    out = []
    for name in LABELS:
        s = seconds(row, name)
        if s is not None:
            out.append((row["columns"][name].get("provider") or name if name == "default" else name, s))
    return out


def cost_rows(docs, provider):
    """The cost-table lines of provider in the reports."""
    out = []
    for doc in docs:
        for row in doc["rows"]:
            for name, s in engines(row):
                if name == provider:
                    out.append("%s %s %d %d %d %.4f" % (row["routine"], row["dtype"], doc["gpus"], row["n"],
                                                        row["nrhs"] if row["routine"] == "potrs" else 0, s))
                    break
    return out


def potrs_tflops(row, s):
    flops = row["n"] ** 3 / 3.0 * (4 if row["dtype"] in ("c64", "c128") else 1)
    return flops / s / 1e12


def plot_tflops(docs, out_png, peak):
    """potrs's TF/s against N, one line per (engine, GPU count)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    for doc in docs:
        lines = {}
        for row in doc["rows"]:
            if row["routine"] == "potrs":
                for name, s in engines(row):
                    lines.setdefault(name, []).append((row["n"], potrs_tflops(row, s)))
        for name, pts in sorted(lines.items()):
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label="%s, %d GPU(s)" % (name, doc["gpus"]),
                    linewidth=2.4 if name == "tiled" else 1.2)
        if peak:
            ax.axhline(0.7 * peak * doc["gpus"], linestyle=":", color="gray", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N")
    ax.set_ylabel("TF/s (potrf n^3/3 flops / potrs time)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    d = docs[0]
    ax.set_title("potrs %s: %s, driver %s, %s%s" % ("/".join(sorted({r["dtype"] for x in docs for r in x["rows"]})),
                 d["device"], d["driver"], d["date"][:10], "; dotted: 70%% of %.1f TF/s x GPUs" % peak if peak else ""),
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)


def _is_mp_bench(path):
    """Whether path is tests/python/jax/bench_mp_gpu.py's JSON (its table:
    tools/mp_bench_table.py, which shares this file's checks and merge rule)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("bench") == "muster-jax-mp-bench"
    except (OSError, ValueError, AttributeError):
        return False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="+", help="files written by muster-gpu-bench --json")
    ap.add_argument("-o", "--out", help="write the plot to this PNG")
    ap.add_argument("--markdown", action="store_true", help="print the markdown table")
    ap.add_argument("--cost", metavar="NAME", help="print provider NAME's cost-table rows")
    ap.add_argument("--tflops", metavar="PNG", help="plot potrs's TF/s, one line per engine and GPU count")
    ap.add_argument("--peak", type=float, default=0.0, help="FP64 peak TF/s per GPU, for --tflops")
    args = ap.parse_args(argv)
    try:
        if args.markdown and _is_mp_bench(args.json[0]):  # the multi-process JAX benchmark's table
            # run as a script this module is __main__: mp_bench_table's
            # `from plot_gpu_bench import` must get it, and its BenchError
            sys.modules.setdefault("plot_gpu_bench", sys.modules[__name__])
            import mp_bench_table
            print("\n".join(mp_bench_table.markdown(mp_bench_table.load(args.json))))
            return 0
        if args.cost or args.tflops:
            docs = by_gpus(args.json)
            for line in cost_rows(docs, args.cost) if args.cost else []:
                print(line)
            if args.tflops:
                try:
                    plot_tflops(docs, args.tflops, args.peak)
                except ImportError as e:
                    print("plot_gpu_bench: matplotlib is needed for --tflops: %s" % e, file=sys.stderr)
                    return 3
            return 0
        doc = load(args.json)
    except BenchError as e:
        print("plot_gpu_bench: %s" % e, file=sys.stderr)
        return 2
    if args.markdown:
        print("\n".join(markdown(doc)))
    if args.out:
        try:
            plot(doc, args.out)
        except ImportError as e:
            print("plot_gpu_bench: %s" % e, file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
