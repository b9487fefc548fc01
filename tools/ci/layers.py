#!/usr/bin/env python3
"""The layers of runtime/: reads every #include and every call between the
runtime's files and reports (1) call or include cycles between modules and
(2) edges that go up a layer (a lower folder reaching a higher one).

A module is a file's stem up to its first '_' (group_cache.c and groupInt.h
are module group; mpi_beat.c is mpi), so the helpers of one concept may call
each other; two concepts may not call each other both ways.  The layers are
the folders of runtime/, bottom up, in LAYERS.  Exit 0 when clean, 1 with
one line per finding; --cycles: cycles only (what a flat runtime/ can be
checked for).  tests/python/tools/test_layers.py runs it."""
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime"
LAYERS = ["base", "shm", "group", "registry", "solve"]  # bottom up


def module(path):
    """group_cache.c, groupInt.h -> group; exit_guard.h -> exit."""
    stem = path.stem[:-3] if path.stem.endswith("Int") else path.stem
    return stem.split("_")[0]


def layer(path, runtime):
    """The folder under runtime/ (None for files at its top)."""
    rel = path.relative_to(runtime).parts
    return rel[0] if len(rel) > 1 else None


def code(path):
    """The text without comments and string literals (words, not code)."""
    text = re.sub(r"/\*.*?\*/", " ", path.read_text(errors="replace"), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


DEF = re.compile(r"^(?!static\b|typedef\b|extern\b|#|struct\b[^(]*[;{]\s*$)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;]*$",
                 re.M)


def graph(files):
    """{(from module, to module): reason} for includes and calls."""
    defs = {}  # function name -> file that defines it
    for f in files:
        if f.suffix == ".c":
            for name in DEF.findall(code(f)):
                defs.setdefault(name, f)
    by_name = {f.name: f for f in files}
    edges = {}
    for f in files:
        text = code(f)
        for inc in re.findall(r'^#\s*include\s+"([^"]+)"', f.read_text(errors="replace"), re.M):
            g = by_name.get(pathlib.PurePath(inc).name)
            if g is not None and module(g) != module(f):
                edges.setdefault((f, g), "includes " + g.name)
        if f.suffix != ".c":
            continue
        for word in set(re.findall(r"\b(\w+)\s*\(", text)):
            g = defs.get(word)
            if g is not None and module(g) != module(f):
                edges.setdefault((f, g), "calls " + word + " (" + g.name + ")")
    return edges


def rel(path):
    """A path as the report names it."""
    return path.relative_to(REPO) if path.is_relative_to(REPO) else path


def cycles(edges):
    """Pairs of modules that reach each other (strongly connected), with one
    edge of each direction as the evidence."""
    succ = {}
    for (f, g) in edges:
        succ.setdefault(module(f), set()).add(module(g))
    def reach(a):
        seen, todo = set(), [a]
        while todo:
            for b in succ.get(todo.pop(), ()):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen
    r = {m: reach(m) for m in succ}
    found = []
    for (f, g), why in sorted(edges.items(), key=lambda e: (str(e[0][0]), str(e[0][1]))):
        a, b = module(f), module(g)
        if a in r.get(b, ()) and b in r.get(a, ()):
            found.append(f"cycle {a} <-> {b}: {rel(f)} {why}")
    return found


def upward(files, edges, runtime):
    """Files outside the layer folders, and edges to a higher layer."""
    found = [f"not in a layer folder: {rel(f)}" for f in files if layer(f, runtime) not in LAYERS]
    for (f, g), why in sorted(edges.items(), key=lambda e: (str(e[0][0]), str(e[0][1]))):
        lf, lg = layer(f, runtime), layer(g, runtime)
        if lf in LAYERS and lg in LAYERS and LAYERS.index(lg) > LAYERS.index(lf):
            found.append(f"upward {lf} -> {lg}: {rel(f)} {why}")
    return found


def findings(runtime=RUNTIME, cycles_only=False):
    """Every cycle and upward edge of the runtime under `runtime`."""
    files = sorted(p for p in runtime.rglob("*") if p.suffix in (".c", ".h"))
    edges = graph(files)
    return cycles(edges) + ([] if cycles_only else upward(files, edges, runtime))


def main(argv):
    found = findings(cycles_only="--cycles" in argv)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
