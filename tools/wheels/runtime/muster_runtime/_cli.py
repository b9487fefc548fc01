"""The `muster` and `shmdump` console commands: exec the program of the
wheel (bin/), so signals, exit codes and stdio are the program's own.

The GPU providers find NVIDIA's CUDA wheels (the [cuda13] extra) in the
site-packages that holds muster_runtime (their RUNPATH); where those wheels
sit in another folder of sys.path (a venv with --system-site-packages over
a Python that has torch's), the command puts their lib folders on
LD_LIBRARY_PATH for the program."""
import os
import pathlib
import sys

from . import bin_dir

NVIDIA_LIBS = ("nvidia/cu13/lib", "nvidia/nccl/lib")


def _cuda_wheel_dirs():
    for entry in sys.path:
        for sub in NVIDIA_LIBS:
            d = pathlib.Path(entry or ".") / sub
            if d.is_dir():
                yield str(d)


def _exec(name: str):
    prog = bin_dir() / name
    dirs = list(dict.fromkeys(_cuda_wheel_dirs()))
    if dirs:
        old = os.environ.get("LD_LIBRARY_PATH")
        os.environ["LD_LIBRARY_PATH"] = ":".join(dirs + ([old] if old else []))
    try:
        os.execv(prog, [name] + sys.argv[1:])
    except OSError as e:
        sys.exit(f"{name}: cannot run {prog}: {e.strerror} (reinstall muster-runtime)")


def muster():
    _exec("muster")


def shmdump():
    _exec("shmdump")
