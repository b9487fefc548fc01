"""tools/plot_gpu_bench.py on the committed fixture tests/data/gpu-bench-sample.json
(written by the bench's own JSON writer, tests/gpu/bench_json.c; made-up
times): the table, merging split runs, refusing what is not the bench's
JSON, the PNG, and the message when matplotlib is missing."""
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "tools", "plot_gpu_bench.py")
FIXTURE = os.path.join(ROOT, "tests", "data", "gpu-bench-sample.json")


def run(*args, env=None):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=120,
                          env=env)


def table_rows(stdout):
    return [l for l in stdout.splitlines() if l.startswith("| ") and not l.startswith("| routine")]


def test_markdown_table():
    p = run("--markdown", FIXTURE)
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    doc = json.load(open(FIXTURE))
    assert len(rows) == len(doc["rows"]) == 11
    assert "2 x NVIDIA H200, driver 580.95.05" in p.stdout
    # the skipped raw cusolverDn column is '-', default / best from the JSON
    assert "| potrs | f64 | 65536 | 1.2460 | cusolvermg | 2.1010 | 1.2455 | 1.2169 | 2048 | - | 1.024 | raw_mg |" in rows
    # ordered by routine, dtype, N whatever the file's order
    keys = [tuple(c.strip() for c in r.split("|")[1:4]) for r in rows]
    assert keys[0] == ("potrs", "f32", "8192") and keys[-1] == ("syevd", "c128", "8192")


def test_merge_split_run(tmp_path):
    doc = json.load(open(FIXTURE))
    a, b = dict(doc), dict(doc)
    a["rows"], b["rows"] = doc["rows"][:4], doc["rows"][4:]
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    whole, parts = run("--markdown", FIXTURE), run("--markdown", str(pb), str(pa))
    assert parts.returncode == 0, parts.stderr
    assert table_rows(parts.stdout) == table_rows(whole.stdout)
    b["gpus"] = 1
    pb.write_text(json.dumps(b))
    p = run("--markdown", str(pa), str(pb))
    assert p.returncode == 2 and "1 x NVIDIA H200 cannot be merged with 2 x NVIDIA H200" in p.stderr


def test_rank_agrees_with_the_bench():
    """best and default / best, computed again, equal the bench's (C) values."""
    sys.path.insert(0, os.path.dirname(SCRIPT))
    import plot_gpu_bench
    for row in json.load(open(FIXTURE))["rows"]:
        again = plot_gpu_bench.rank(json.loads(json.dumps(row)))
        assert again["best"] == row["best"]
        assert abs(again["default_over_best"] / row["default_over_best"] - 1) < 1e-8  # %.9g in the file


def test_merge_runs_split_by_columns(tmp_path):
    doc = json.load(open(FIXTURE))
    a, b = json.loads(json.dumps(doc)), json.loads(json.dumps(doc))
    for row in a["rows"]:  # a: the muster columns only; b: the raw ones only
        for name in ("raw_mg", "raw_dn"):
            row["columns"][name] = {"ran": False, "skipped": "not selected (--columns)"}
        row["best"], row["default_over_best"] = "cusolverdn", 1.0
    for row in b["rows"]:
        for name in ("default", "cusolverdn", "cusolvermg"):
            row["columns"][name] = {"ran": False, "skipped": "not selected (--columns)"}
        row["best"], row["default_over_best"] = "raw_dn", None
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    whole = run("--markdown", FIXTURE)
    for order in ((pa, pb), (pb, pa)):
        p = run("--markdown", str(order[0]), str(order[1]))
        assert p.returncode == 0, p.stderr
        assert table_rows(p.stdout) == table_rows(whole.stdout)


def test_refuses_what_is_not_the_bench(tmp_path):
    doc = json.load(open(FIXTURE))
    cases = []
    d = json.loads(json.dumps(doc))
    del d["rows"][2]["columns"]["raw_dn"]["seconds"]
    cases.append((d, 'rows[2] (potrs f64 16384).raw_dn: missing "seconds"'))
    d = json.loads(json.dumps(doc))
    d["rows"][0]["n"] = True
    cases.append((d, '"n" is True'))
    d = json.loads(json.dumps(doc))
    d["rows"][0]["columns"]["default"]["seconds"] = -1
    cases.append((d, "seconds -1 is not positive"))
    d = json.loads(json.dumps(doc))
    d["schema"] = 2
    cases.append((d, "not muster-gpu-bench schema 1 JSON"))
    for i, (d, want) in enumerate(cases):
        path = tmp_path / ("bad%d.json" % i)
        path.write_text(json.dumps(d))
        p = run("--markdown", str(path))
        assert p.returncode == 2 and want in p.stderr and str(path) in p.stderr, (want, p.stderr)
        assert p.stdout == ""
    trunc = tmp_path / "trunc.json"
    trunc.write_text(open(FIXTURE).read()[:500])
    p = run(str(trunc))
    assert p.returncode == 2 and "trunc.json" in p.stderr


def test_png(tmp_path):
    import matplotlib.image
    out = tmp_path / "bench.png"
    p = run("-o", str(out), FIXTURE)
    assert p.returncode == 0, p.stderr
    img = matplotlib.image.imread(str(out))
    # 5 panels (potrs f32, f64; potri f64; syevd f64, c128) in a 3 x 2 grid
    assert img.shape[1] > img.shape[0] > 500
    colours = {tuple(px) for px in img[::7, ::7, :3].reshape(-1, 3).round(2).tolist()}
    assert len(colours) > 20  # lines of several engines drawn, not a blank page


def test_without_matplotlib(tmp_path):
    fake = tmp_path / "matplotlib"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = run("-o", str(tmp_path / "x.png"), FIXTURE, env=env)
    assert p.returncode == 3 and "matplotlib is needed for -o (pip install matplotlib)" in p.stderr
    assert not (tmp_path / "x.png").exists()
    p = run("--markdown", FIXTURE, env=env)
    assert p.returncode == 0 and len(table_rows(p.stdout)) == 11


def two_counts(tmp_path):
    """The fixture as a 2-GPU run and again as a 4-GPU one (times halved)."""
    doc = json.load(open(FIXTURE))
    four = json.loads(json.dumps(doc))
    four["gpus"] = 4
    for row in four["rows"]:
        for col in row["columns"].values():
            if col.get("ran"):
                col["seconds"] /= 2
    paths = []
    for name, d in (("two.json", doc), ("four.json", four)):
        (tmp_path / name).write_text(json.dumps(d))
        paths.append(str(tmp_path / name))
    return doc, paths


def test_cost_rows(tmp_path):
    doc, paths = two_counts(tmp_path)
    p = run("--cost", "cusolvermg", *paths)
    assert p.returncode == 0, p.stderr
    rows = [l.split() for l in p.stdout.splitlines()]
    # every row where a column ran cusolvermg, per GPU count, in the cost table's columns
    want = [r for r in doc["rows"] if any(c.get("ran") and (n == "cusolvermg" or c.get("provider") == "cusolvermg")
                                          for n, c in r["columns"].items())]
    assert len(rows) == 2 * len(want) > 0
    f64 = [r for r in rows if r[:2] == ["potrs", "f64"] and r[3] == "65536"]
    assert sorted(r[2] for r in f64) == ["2", "4"]
    s2, s4 = (float(r[5]) for r in sorted(f64, key=lambda r: r[2]))
    assert abs(s4 - s2 / 2) < 1e-3 and all(len(r) == 6 for r in rows)
    assert run("--cost", "nosuch", *paths).stdout == ""


def test_tflops_png(tmp_path):
    import matplotlib.image
    _, paths = two_counts(tmp_path)
    out = tmp_path / "tflops.png"
    p = run("--tflops", str(out), "--peak", "66.9", *paths)
    assert p.returncode == 0, p.stderr
    img = matplotlib.image.imread(str(out))
    assert img.shape[1] > img.shape[0] > 300
    # two files of the same GPU count are merged, of different counts are not refused
    p = run("--markdown", *paths)
    assert p.returncode == 2 and "cannot be merged" in p.stderr
