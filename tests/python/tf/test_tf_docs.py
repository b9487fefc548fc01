"""Every ```python block of docs/tensorflow.md runs as written (each in a
fresh interpreter: the examples configure TensorFlow before it starts)."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "tensorflow.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_doc_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_doc_example_runs(tmp_path, i):
    script = tmp_path / ("example%d.py" % i)
    script.write_text(BLOCKS[i])
    env = dict(os.environ, PYTHONPATH=str(REPO / "adapters" / "tensorflow"))
    p = subprocess.run([sys.executable, str(script)], env=env, cwd=str(tmp_path),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180)
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0, out[-4000:]
