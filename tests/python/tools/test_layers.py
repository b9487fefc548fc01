"""runtime/ keeps its layers (tools/ci/layers.py): no call or include cycle
between its modules, nothing calls or includes a file of a higher layer
folder, every source is in a layer folder, and the atomic shorthands have
one home.  The checker itself is tried on planted trees, so a checker that
finds nothing fails here too.  Cheap: it reads the sources."""
import importlib.util
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("layers", REPO / "tools" / "ci" / "layers.py")
layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(layers)


def test_runtime_has_no_cycle_and_no_upward_edge():
    found = layers.findings()
    assert not found, "runtime/ layering broken:\n" + "\n".join(found)


def plant(tmp_path, files):
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_checker_finds_a_call_cycle(tmp_path):
    rt = plant(tmp_path, {
        "base/alpha.c": '#include "base/beta.h"\nint alpha_one(void) {\n  return beta_two();\n}\n',
        "base/beta.h": "int beta_two(void);\n",
        "base/beta.c": "int beta_two(void) {\n  return alpha_one();\n}\n",
    })
    found = layers.findings(rt)
    assert any(l.startswith("cycle alpha <-> beta") for l in found), found
    assert any("calls alpha_one" in l for l in found), found


def test_checker_finds_an_upward_include_and_a_stray_file(tmp_path):
    rt = plant(tmp_path, {
        "base/low.c": '#include "solve/high.h"\nint low_one(void) {\n  return 0;\n}\n',
        "solve/high.h": "int high_one(void);\n",
        "stray.c": "int stray_one(void) {\n  return 0;\n}\n",
    })
    found = layers.findings(rt)
    assert any(l.startswith("upward base -> solve") and "includes high.h" in l for l in found), found
    assert any("not in a layer folder" in l and "stray.c" in l for l in found), found


def test_helpers_of_one_module_may_call_each_other(tmp_path):
    rt = plant(tmp_path, {
        "group/group.c": "int group_a(void) {\n  return group_b();\n}\n",
        "group/group_cache.c": "int group_b(void) {\n  return group_a();\n}\n",
    })
    assert layers.findings(rt) == []


def test_atomic_shorthands_have_one_home():
    home = REPO / "runtime" / "base" / "atomics.h"
    bad = [f"{p.relative_to(REPO)}" for folder in ("runtime", "providers", "tools", "adapters")
           for p in sorted((REPO / folder).rglob("*")) if p.suffix in (".c", ".h", ".cu") and p != home
           and re.search(r"#\s*define\s+(LD|LDA|ST|STR)\(", p.read_text(errors="replace"))]
    assert not bad, "a second set of atomic shorthands (use runtime/base/atomics.h): " + ", ".join(bad)
