"""The `muster` and `shmdump` console commands: exec the program of the
wheel (bin/), so signals, exit codes and stdio are the program's own."""
import os
import sys

from . import bin_dir


def _exec(name: str):
    prog = bin_dir() / name
    try:
        os.execv(prog, [name] + sys.argv[1:])
    except OSError as e:
        sys.exit(f"{name}: cannot run {prog}: {e.strerror} (reinstall muster-runtime)")


def muster():
    _exec("muster")


def shmdump():
    _exec("shmdump")
