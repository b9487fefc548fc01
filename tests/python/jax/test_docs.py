"""The ```python examples of docs/jax.md and the pages split off it
(jax-shard-map.md, jax-derivatives.md, jax-jaxmg.md), each run in a fresh process on 4
CPU devices, checked against the results the page prints in comments."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
DOCS = [REPO / "docs" / f"{name}.md" for name in ("jax", "jax-shard-map", "jax-derivatives", "jax-jaxmg")]


def blocks():
    """The code of the pages' ```python blocks, in order."""
    return [b for doc in DOCS for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S)]


def expected_prints(code):
    """'print(...)  # True' lines: the comment is what the line must print."""
    want = []
    for line in code.splitlines():
        m = re.match(r"\s*print\(.*\)\s*#\s*(.+)$", line)
        if m:
            want.append(m.group(1).split(":")[0].strip())
    return want


def test_doc_has_examples():
    assert len(blocks()) >= 5


@pytest.mark.parametrize("index", range(len(blocks())))
def test_doc_example(index):
    code = blocks()[index]
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "adapters" / "jax"), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [l.strip() for l in out.stdout.splitlines()]
    for want in expected_prints(code):
        assert any(l == want or l.startswith(want) for l in lines), f"expected {want!r} in {lines}"
