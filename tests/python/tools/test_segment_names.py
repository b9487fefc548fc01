"""The Python suites' leak check against segments of the real naming.

adapters/common/runtime.py job_segments asks libmuster's own parser
(muster_segment_name_match) which files of /dev/shm are a job's segments;
the jax, tf and torch conftests all call it.  Here segments are planted
under /dev/shm/muster.<uid>.<pidns>.<job>.<group>, as a test that leaked
would leave them, with decoys next to them, and each conftest's
job_segments, lifted out of its file (so no framework is imported), must
name exactly the planted ones.
"""
import ast
import ctypes
import importlib.util
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("MUSTER_BUILD", REPO / "build"))
BUILD = BUILD if BUILD.is_absolute() else REPO / BUILD
CONFTESTS = {fw: REPO / "tests" / "python" / fw / "conftest.py" for fw in ("jax", "tf", "torch")}


def _load_runtime():
    spec = importlib.util.spec_from_file_location("muster_common_runtime",
                                                  REPO / "adapters" / "common" / "runtime.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


runtime = _load_runtime()


@pytest.fixture(scope="module")
def lib():
    path = BUILD / "lib" / "libmuster.so"
    if not path.exists():
        pytest.skip(f"{path} not built (scons)")
    return runtime.load(path.parent)


@pytest.fixture
def planted(tmp_path):
    """Segment files of a job of this test's own, in this pid namespace and
    in another one (a rank in a container sharing /dev/shm), and decoys the
    check must not take for them.  Removed afterwards."""
    job = "pyleak%d" % os.getpid()
    uid, ns = os.getuid(), os.stat("/proc/self/ns/pid").st_ino
    leaked = ["muster.%d.%d.%s.potrs.3" % (uid, ns, job),
              "muster.%d.%d.%s.g" % (uid, ns + 1, job)]
    decoys = ["muster.%d.%s.old" % (uid, job),                  # builds up to 5b153d5
              "muster.%d.%d.%sx.g" % (uid, ns, job),            # another job, same prefix
              "muster.%d.%d.%s.g" % (uid + 1, ns, job),         # another user's
              "muster.%d.0%d.%s.g" % (uid, ns, job)]            # a leading zero: no name
    made = []
    try:
        for name in leaked + decoys:
            path = os.path.join(runtime.SEGMENT_DIR, name)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            made.append(path)
        yield job, sorted(os.path.join(runtime.SEGMENT_DIR, n) for n in leaked)
    finally:
        for path in made:
            os.unlink(path)


def test_shared_helper_catches_real_names(lib, planted):
    job, leaked = planted
    assert runtime.job_segments(lib, job) == leaked
    assert runtime.job_segments(lib, job + "y") == []


def test_c_parser_is_the_one_home(lib):
    """The helper's verdicts are the C parser's: spot checks of the rules
    that a Python copy got wrong or could (muster_segment_name_parse)."""
    ok = lambda name, job=None: lib.muster_segment_name_match(name.encode(), 0,  # noqa: E731
                                                              job and job.encode())
    assert ok("muster.0.1.j.g") and ok("muster.0.1.j.g.h.i", "j")
    assert not ok("muster.0.j.g") and not ok("muster.00.1.j.g") and not ok("muster.0.0.j.g")
    assert not ok("muster.0.1.jj.g", "j")


def _conftest_job_segments(fw, lib):
    """The job_segments function of a framework's conftest, defined alone in
    a namespace that gives it the real runtime module and library."""
    tree = ast.parse(CONFTESTS[fw].read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "job_segments")
    shim = type("Lib", (), {"runtime": staticmethod(lambda: lib)})
    ns = {"os": os, "_runtime": runtime, "_lib": shim}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(CONFTESTS[fw]), "exec"), ns)
    return ns["job_segments"]


@pytest.mark.parametrize("fw", sorted(CONFTESTS))
def test_each_conftest_leak_check_catches_real_names(fw, lib, planted, monkeypatch):
    job, leaked = planted
    check = _conftest_job_segments(fw, lib)
    monkeypatch.setenv("MUSTER_JOB", job)
    found = check(job) if check.__code__.co_argcount else check()
    assert sorted(found) == leaked


def test_library_declares_the_matcher(lib):
    fn = lib.muster_segment_name_match
    assert fn.restype is ctypes.c_int and len(fn.argtypes) == 3


def test_constants_match_the_header(tmp_path):
    """runtime.py's SEGMENT_* are muster/segment.h's (as test_runtime_abi.py
    checks muster.h's, in the torch suite)."""
    src, exe = tmp_path / "seg.c", tmp_path / "seg"
    src.write_text('#include <stdio.h>\n#include <muster/segment.h>\nint main(void) {\n'
                   '  printf("%s %u %u\\n", MUSTER_SEGMENT_DIR, MUSTER_SEGMENT_MINE,'
                   ' MUSTER_SEGMENT_HERE);\n  return 0;\n}\n')
    subprocess.run(["gcc", "-std=gnu11", "-I", str(REPO / "include"), "-o", str(exe), str(src)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert out == [runtime.SEGMENT_DIR, str(runtime.SEGMENT_MINE), str(runtime.SEGMENT_HERE)]
