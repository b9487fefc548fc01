"""storecase.run_workers keeps what a job printed when its budget runs
out: each late process first prints every thread's Python stack
(SIGUSR1, storecase.worker_say's handler), then is killed, its output
ending with the budget line; a process that ended in time keeps its own
returncode.  Each worker line ends with its seconds since the start.  The
GPU scripts depend on it (a hung job used to lose every line; on
2026-11-28 a 4-GPU job cut at its budget could not tell a hang from a
slow case)."""
import pathlib
import re
import signal
import sys
import textwrap

TESTS_PY = pathlib.Path(__file__).resolve().parents[1]  # tests/python
sys.path.insert(0, str(TESTS_PY))
import storecase  # noqa: E402


def test_late_job_keeps_its_output_and_stacks(tmp_path, monkeypatch):
    worker = tmp_path / "worker.py"
    worker.write_text(textwrap.dedent("""\
        import sys, time
        import storecase
        me = int(sys.argv[1])
        say = storecase.worker_say("proc", me)
        say("started")

        def sleep_past_budget():
            time.sleep(60)

        if me == 1:
            sleep_past_budget()
        say("done")
        """))
    monkeypatch.setenv("MUSTER_TEST_BUDGET", "3")
    procs, outs = storecase.run_workers(worker, 2, "case", TESTS_PY, budget=600)  # storecase on PYTHONPATH
    assert procs[0].returncode == 0 and "proc 0: done" in outs[0], outs[0]
    assert "budget" not in outs[0] and "sleep_past_budget" not in outs[0], outs[0]
    assert re.search(r"^proc 0: started \[[0-9]+\.[0-9] s\]$", outs[0], re.M), outs[0]
    assert procs[1].returncode == -signal.SIGKILL, procs[1].returncode
    assert "proc 1: started" in outs[1] and "proc 1: done" not in outs[1], outs[1]
    # the stack (faulthandler: 'File "...", line N in sleep_past_budget') before the budget line
    stack, cut = outs[1].find("in sleep_past_budget"), outs[1].find("still running after the 3 s budget")
    assert 0 <= stack < cut, outs[1]
    assert "its Python stacks above (SIGUSR1), then killed]" in outs[1], outs[1]
