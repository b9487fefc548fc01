"""storecase.run_workers keeps what a job printed when its budget runs
out: the late processes are killed, their output ends with the budget
line, and a process that ended in time keeps its own returncode.  The
GPU scripts depend on it (a hung job used to lose every line)."""
import pathlib
import signal
import sys
import textwrap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import storecase  # noqa: E402


def test_late_job_keeps_its_output(tmp_path, monkeypatch):
    worker = tmp_path / "worker.py"
    worker.write_text(textwrap.dedent("""\
        import sys, time
        me = int(sys.argv[1])
        print(f"proc {me}: started")
        if me == 1:
            time.sleep(60)
        print(f"proc {me}: done")
        """))
    monkeypatch.setenv("MUSTER_TEST_BUDGET", "3")
    procs, outs = storecase.run_workers(worker, 2, "case", tmp_path, budget=600)
    assert procs[0].returncode == 0 and "proc 0: done" in outs[0], outs[0]
    assert "budget" not in outs[0], outs[0]
    assert procs[1].returncode == -signal.SIGKILL, procs[1].returncode
    assert "proc 1: started" in outs[1] and "proc 1: done" not in outs[1], outs[1]
    assert "still running after the 3 s budget: killed" in outs[1], outs[1]
