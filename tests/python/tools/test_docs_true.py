"""Docs that stay true: every list in docs/ and in --help that names MUSTER_*
variables, routines or CLI options is checked against the code's own tables.

The sources (never a list written here):
  - variables: every "MUSTER_X" string literal of the product's C code
    (runtime/, providers/, tools/) that is not a C name of include/ (a code
    or macro such as MUSTER_OK), and every os.environ "MUSTER_X" of the
    adapters' Python;
  - routines: MUSTER_ROUTINE_MAP in include/muster/types.h, and each
    provider's routines as `muster providers --json` reports them;
  - options: each command's cli_opt_t table (tools/muster/*.c,
    tools/shmdump/shmdump.c).
Cheap (a few --help runs and file reads): the pytest stage of
tests/run-all.sh runs it."""
import json
import os
import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("MUSTER_BUILD", REPO / "build"))
BUILD = BUILD if BUILD.is_absolute() else REPO / BUILD
DOCS = sorted((REPO / "docs").glob("*.md")) + sorted((REPO / "docs" / "providers").glob("*.md")) + [REPO / "README.md"]
VAR = re.compile(r"\bMUSTER_[A-Z0-9_]*[A-Z0-9]\b")


def read(p):
    return pathlib.Path(p).read_text(encoding="utf-8", errors="replace")


def sources(*folders, exts=(".c", ".h", ".cu", ".cc"), tests=False):
    """The files of folders, without tests (a test's variables are not the
    product's) unless tests."""
    for folder in folders:
        for p in sorted((REPO / folder).rglob("*")):
            if p.suffix in exts and p.is_file() and (tests or "/test" not in str(p.relative_to(REPO))):
                yield p


def c_names(*folders):
    """The MUSTER_* C names folders define: macros, enum members, and the
    rows of the X-macro maps (MUSTER_ERRNO_MAP's EINVAL is MUSTER_EINVAL)."""
    names = set()
    for p in sources(*folders or ("include", "runtime", "providers", "tools")):
        text = read(p)
        names |= set(re.findall(r"#\s*define\s+(MUSTER_\w+)", text))
        names |= set(re.findall(r"^\s+(MUSTER_\w+)\s*(?:=|,)", text, re.M))
        for block in re.findall(r"#define MUSTER_\w+_MAP\(X\)(.*?)\n\n", text, re.S):
            names |= {"MUSTER_" + n for n in re.findall(r"X\((\w+),", block)}
            names |= {"MUSTER_KIND_" + k for k in re.findall(r"X\(\w+, -?\d+, \"[^\"]*\", (\w+)\)", block)}
    return names


def c_variables(*folders):
    """The MUSTER_* variables the C code of folders reads: its string
    literals that are no C name (a code's name, "MUSTER_OK", is one)."""
    lits = set()
    for p in sources(*folders):
        lits |= set(re.findall(r'"(MUSTER_[A-Z0-9_]+)"', read(p)))
    return lits - c_names()


def py_variables():
    found = set()
    for p in sources("adapters", exts=(".py",)):
        found |= set(re.findall(r'environ(?:\.get)?[\[(]\s*"(MUSTER_[A-Z0-9_]+)"', read(p)))
    return found


def routines():
    text = read(REPO / "include" / "muster" / "types.h")
    block = text.split("#define MUSTER_ROUTINE_MAP(X)")[1].split("#define")[0]
    names = re.findall(r'X\([A-Z0-9]+, \d+, "([a-z0-9]+)"', block)
    assert names, "no routine in MUSTER_ROUTINE_MAP"
    return names


def run(*argv):
    p = subprocess.run([str(BUILD / "bin" / argv[0])] + list(argv[1:]), capture_output=True, text=True,
                       timeout=60)
    return p.stdout + p.stderr


def section(text, title):
    """The lines of a markdown section, from its heading to the next one of
    the same or a higher level."""
    m = re.search(r"^(#+) " + re.escape(title) + r"\s*$", text, re.M)
    assert m, f"no section '{title}'"
    level = len(m.group(1))
    end = re.search(r"^#{1,%d} " % level, text[m.end():], re.M)
    return text[m.end():m.end() + end.start()] if end else text[m.end():]


def table_vars(text):
    """MUSTER_* names in the first cell of a markdown table's rows."""
    found = set()
    for line in text.splitlines():
        if line.startswith("| `MUSTER_"):
            found |= set(VAR.findall(line.split("|")[1]))
    return found


# ---- variables ------------------------------------------------------------------


def help_env():
    text = run("muster", "--help")
    env = text.split("\nenvironment")[1].split("\nexit status")[0]
    return {v for v in VAR.findall(env) if not v.startswith("MUSTER_E")} - {"MUSTER_TIMEOUT_"}


def test_help_lists_every_variable_the_cli_reads():
    """muster --help's environment block names every variable the runtime,
    the providers and the CLI read, and no other."""
    code = c_variables("runtime", "providers", "tools/muster")
    shown = help_env()
    assert not code - shown, f"read by the code but missing from muster --help: {sorted(code - shown)}"
    assert not shown - code, f"in muster --help but read by no code: {sorted(shown - code)}"


def test_cli_md_table_is_the_help_list():
    table = table_vars(read(REPO / "docs" / "cli.md"))
    shown = help_env()
    assert table == shown, (f"docs/cli.md's table lacks {sorted(shown - table)}, "
                            f"has extra {sorted(table - shown)}")


def test_runtime_md_names_every_runtime_variable():
    env = section(read(REPO / "docs" / "runtime.md"), "Environment")
    code = c_variables("runtime")
    named = set(VAR.findall(env))
    assert not code - named, f"docs/runtime.md#environment misses {sorted(code - named)}"
    table = table_vars(env)
    assert not table - code, f"docs/runtime.md's table has variables the runtime does not read: {sorted(table - code)}"


def test_muster_h_lists_the_runtime_variables():
    head = read(REPO / "include" / "muster.h").split("#ifndef MUSTER_H")[0]
    listed = set(re.findall(r"^ \*\s+(MUSTER_[A-Z0-9_]+)\s", head, re.M))
    code = c_variables("runtime")
    assert listed == code, f"include/muster.h's list lacks {sorted(code - listed)}, has extra {sorted(listed - code)}"


def test_docs_name_no_stale_variable():
    """Every MUSTER_* name in docs/ and README.md is a C name of include/ or a
    variable some code reads (a renamed or removed one fails here)."""
    known = c_names("include", "runtime", "providers", "tools", "adapters", "tests") | py_variables()
    known |= c_variables("runtime", "providers", "tools")
    for p in sources("tests", "adapters", exts=(".c", ".h", ".py", ".sh"), tests=True):  # the tests' own
        known |= set(re.findall(r'"(MUSTER_[A-Z0-9_]+)"', read(p))) | set(re.findall(r"\b(MUSTER_[A-Z0-9_]+)=", read(p)))
    stale = {}
    for p in DOCS:
        names = set(re.findall(r"\b(MUSTER_[A-Z0-9_]*[A-Z0-9])\b(?![*])", read(p)))  # not a MUSTER_E* family
        for v in names - known:
            stale.setdefault(v, []).append(p.name)
    assert not stale, f"names in the docs that no code has: {stale}"


# ---- routines ---------------------------------------------------------------------

FACTORIZATIONS = {"geqrf", "gesvd", "polar"}  # outputs in B (MUSTER_TAKES_O): no bench rows


def routine_lists(text):
    """Lists of routine names that follow ROUTINE or --routine in a line."""
    names = "|".join(routines())
    pat = re.compile(r"(ROUTINE|--routine)[^.;)\n]{0,40}?((?:%s)(?:[`|, ]+(?:or |and )?`?(?:%s)`?)+)" % (names, names))
    for line in text.splitlines():
        for m in pat.finditer(line):
            yield line, set(re.findall(names, m.group(2)))


def test_routine_lists_are_complete():
    """Every 'ROUTINE potrs|...' list in the docs and in each --help names
    every routine of MUSTER_ROUTINE_MAP; bench's all but the factorizations,
    bench --calibrate's also not gels (a cost table row has no m)."""
    every = set(routines())
    texts = [(p.name, read(p)) for p in DOCS]
    for argv in (("muster", "--help"), ("muster", "solve", "--help"), ("muster", "bench", "--help"),
                 ("muster", "bench", "--calibrate", "--help")):
        texts.append((" ".join(argv), run(*argv)))
    seen = 0
    for name, text in texts:
        for line, listed in routine_lists(text):
            want = every
            if "calibrat" in line or "potrs|potri|syevd|getrs]" in line:
                want = every - {"gels"} - FACTORIZATIONS  # a cost table row has no m
            elif name == "muster bench --help" or re.search(r"\bbench \[", line):  # muster --help's too
                want = every - FACTORIZATIONS  # bench times the solvers
            assert listed == want, f"{name}: {line.strip()[:160]}: lacks {sorted(want - listed)}"
            seen += 1
    assert seen >= 5


def test_routines_md_has_a_row_per_routine():
    """docs/routines.md's first table: one row per routine of the map, no other."""
    top = read(REPO / "docs" / "routines.md").split("\n## ")[0]
    rows = set(re.findall(r"^\| (\w+) \|", top, re.M)) - {"routine"}
    assert rows == set(routines()), f"docs/routines.md's table: {sorted(rows)}, the map: {sorted(routines())}"


def test_provider_sections_list_their_routines():
    """Each provider's '| routines |' row in its page, docs/providers/NAME.md,
    names the routines its build registers (muster providers --json)."""
    provs = json.loads(run("muster", "providers", "--json"))["providers"]
    assert {p["name"] for p in provs} >= {"lapack"}
    for p in provs:
        page = REPO / "docs" / "providers" / f"{p['name']}.md"
        sec = section(read(page), p["name"])
        row = re.search(r"^\| routines \|(.*)$", sec, re.M)
        assert row, f"docs/providers/{p['name']}.md has no '| routines |' row"
        listed = set(re.findall(r"`(\w+)`", row.group(1))) & set(routines())
        assert listed == set(p["routines"]), f"{p['name']}: docs say {sorted(listed)}, code {sorted(p['routines'])}"


# ---- CLI options ----------------------------------------------------------------

COMMANDS = {  # command: (the file of its option table, its --help argv, its docs page and section there)
    "solve": ("tools/muster/cmd_solve.c", ("muster", "solve", "--help"), "cli-solve.md", "muster solve"),
    "bench": ("tools/muster/cmd_bench.c", ("muster", "bench", "--help"), "cli-bench.md", "muster bench"),
    "calibrate": ("tools/muster/calibrate.c", ("muster", "bench", "--calibrate", "--help"),
                  "cli-bench.md", "muster bench --calibrate"),
    "providers": ("tools/muster/cmd_providers.c", ("muster", "providers", "--help"), "cli.md", "muster providers"),
    "rendezvous": ("tools/muster/cmd_rendezvous.c", ("muster", "rendezvous", "--help"), "cli-rendezvous.md",
                   "muster rendezvous"),
    "shmdump": ("tools/shmdump/shmdump.c", ("shmdump", "--help"), "cli-shmdump.md", "shmdump"),
}


def option_table(path):
    text = read(REPO / path)
    table = re.search(r"cli_opt_t opts\[\] = \{(.*?)\};", text, re.S)
    assert table, f"{path}: no cli_opt_t opts[] table"
    return set(re.findall(r'\{"(--[a-z-]+)", [01]\}', table.group(1))) - {"--help"}


def options_in(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text))


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_help_and_cli_md_show_each_option(cmd):
    path, argv, page, title = COMMANDS[cmd]
    table = option_table(path)
    assert table, path
    shown = options_in(run(*argv))
    assert not table - shown, f"{' '.join(argv)} does not show {sorted(table - shown)}"
    # bench's help points at --calibrate, solve's at mpirun's -np
    extra = shown - table - {"--help", "--calibrate", "--opt", "--json"} - ({"--out"} if cmd == "bench" else set())
    assert not extra, f"{' '.join(argv)} shows options the command does not take: {sorted(extra)}"
    doc = section(read(REPO / "docs" / page), title)
    if cmd == "bench":  # its own section is bench's; --calibrate has a subsection
        doc = re.split(r"^#+ muster bench --calibrate", doc, flags=re.M)[0]
    documented = options_in(doc)
    assert not table - documented, f"docs/{page}#{title} does not document {sorted(table - documented)}"
