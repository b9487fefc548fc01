"""The ```python examples of docs/torch.md and docs/torch-linalg.md, each run in a fresh process on the
CPU (a block whose first line is "# torchrun ARGS" under torchrun with those
arguments), checked against the results the page prints in comments.  The
```py-gpu blocks are for tests/gpu/run-torch-tests.sh (blocks("py-gpu"))."""
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
DOCS = [REPO / "docs" / "torch.md", REPO / "docs" / "torch-linalg.md"]


def blocks(lang="python"):
    """The code of the pages' ```LANG blocks, in order."""
    return [b for doc in DOCS for b in re.findall(r"```%s\n(.*?)```" % re.escape(lang), doc.read_text(), flags=re.S)]


def expected_prints(code):
    """'print(...)  # True' lines: the comment is what the line must print."""
    want = []
    for line in code.splitlines():
        m = re.match(r"\s*print\(.*\)\s*#\s*(.+)$", line)
        if m:
            want.append(m.group(1).strip())
    return want


def command(code, path, logs):
    """How to run a block saved at `path`: python, or torchrun when it says
    so, each rank's stdout then in a file of its own under `logs`."""
    first = code.splitlines()[0]
    if first.startswith("# torchrun "):
        return [sys.executable, "-m", "torch.distributed.run", "--log-dir", str(logs), "--redirects", "1",
                *shlex.split(first[11:]), str(path)]
    return [sys.executable, str(path)]


def run_block(code, tmp_path, timeout=300):
    """Run one block; returns its stdout lines after checking its exit status
    and every line its comments say it prints (each rank prints them under
    torchrun, so each must appear)."""
    path = tmp_path / "example.py"
    path.write_text(code)
    env = dict(os.environ)
    # torchrun makes a log folder (torchelastic_*) in TMPDIR and never removes
    # it: keep it under pytest's tmp_path, not in /tmp
    (tmp_path / "tmp").mkdir()
    env["TMPDIR"] = str(tmp_path / "tmp")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "adapters" / "torch"),
                                         env.get("PYTHONPATH", "")])
    logs = tmp_path / "logs"
    out = subprocess.run(command(code, path, logs), env=env, capture_output=True, text=True,
                         timeout=timeout, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    # torchrun's ranks sharing one stdout interleave a line's pieces ("True"
    # and " (4, 4)" apart: "TrueTrue (4, 4) (4, 4)"): each rank's own file
    ranks = sorted(logs.glob("**/stdout.log"))
    texts = [r.read_text() for r in ranks] if ranks else [out.stdout]
    if code.startswith("# torchrun "):
        assert len(ranks) >= 2, (ranks, out.stdout[-2000:], out.stderr[-2000:])
    lines = []
    for text in texts:
        mine = [l.strip() for l in text.splitlines()]
        for want in expected_prints(code):
            assert want in mine, f"expected {want!r} in {mine}"
        lines += mine
    return lines


def test_doc_has_examples():
    assert len(blocks()) >= 5 and len(blocks("py-gpu")) >= 1
    assert any(b.startswith("# torchrun ") for b in blocks())


@pytest.mark.parametrize("index", range(len(blocks())))
def test_doc_example(index, tmp_path):
    run_block(blocks()[index], tmp_path)
