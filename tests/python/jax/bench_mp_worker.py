"""One process of the multi-process benchmark (bench_mp_gpu.py starts one
per GPU, each with its own GPU, over jax.distributed).

usage: bench_mp_worker.py PROC NPROC PORT SPEC.json

SPEC (written by bench_mp_gpu.py): the rows, the columns, reps, warmup,
platform, the JSON to fill, the deadline.  For each row and column: W
warm-up calls, then R timed ones, each on a fresh A (untimed), after a
barrier, from the call to block_until_ready; a call's time is the slowest
process's; the column's seconds are the median of those.  The last result
is checked (bench_mp_matrix) before the time counts.  Process 0 writes the
column into the JSON as soon as it is done.  After each column every
process calls muster_jax.release(): muster's providers give back what they
cached for it (NCCL communicators, handles, device buffers), so the next
column starts from what the process holds itself (XLA's pool, the arrays).
Prints "proc I: ..." lines.
"""
import faulthandler
import json
import os
import signal
import sys
import time
import warnings

proc, nproc, port = (int(v) for v in sys.argv[1:4])
# the launcher's SIGUSR1 before it kills a hung launch: every thread's stack
faulthandler.register(signal.SIGUSR1, all_threads=True)


def hang_for_test():
    """MUSTER_BENCH_TEST_HANG=1 (test_bench_mp.py): a launch that never ends."""
    while True:
        time.sleep(1)


if os.environ.get("MUSTER_BENCH_TEST_HANG") == "1":
    hang_for_test()
with open(sys.argv[4], encoding="utf-8") as f:
    SPEC = json.load(f)
# host checks of several processes at once: one BLAS thread pool each
os.environ.setdefault("OPENBLAS_NUM_THREADS", "4")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# A is donated to every call; where an engine's layout needs a copy anyway
# (the store path's column-major operand), XLA says so at each compile
warnings.filterwarnings("ignore", message="Some donated buffers were not usable")

import jax  # noqa: E402

jax.config.update("jax_platforms", SPEC["platform"])
jax.config.update("jax_enable_x64", True)
jax.distributed.initialize(f"127.0.0.1:{port}", nproc, proc,
                           local_device_ids=[proc] if SPEC["platform"] == "cuda" else None)

import numpy as np  # noqa: E402

import bench_mp_columns as columns  # noqa: E402
import bench_mp_gpu as bench  # noqa: E402
import muster_jax as mj  # noqa: E402
import muster_jax.distributed as md  # noqa: E402


def say(*what):
    print(f"proc {proc}:", *what, flush=True)


def agree(s, mine: bytes) -> list:
    """Every process's `mine` (up to 1024 bytes), over the store set."""
    return [v.rstrip(b"\0") for v in s.allgather(mine[:1024].ljust(1024, b"\0"))]


def timed(s, col, warmup: int, reps: int):
    """(this process's times, the last result)."""
    times, out = [], None
    for i in range(warmup + reps):
        inputs = col.fresh()
        jax.block_until_ready(inputs)
        out = None  # the previous result's memory back before the call
        s.barrier()
        t0 = time.perf_counter()
        out = jax.block_until_ready(col.call(*inputs))
        dt = time.perf_counter() - t0
        del inputs
        if i >= warmup:
            times.append(dt)
    return times, out


def run_column(s, ctx, row, name, opts):
    """The column's JSON entry (the same on every process)."""
    err, times, info, chk = None, [], None, None
    try:
        col = columns.make(name, ctx, row, opts)
        times, out = timed(s, col, SPEC["warmup"], SPEC["reps"])
        chk = columns.check(col, out)
        del out
        if name == "default":  # a warm eager call: the engine the choice took, and its own seconds
            col.probe()
        info = col.chose()
    except Exception as e:  # noqa: BLE001 - any engine's failure is this column's result
        err = f"{type(e).__name__}: {e}".replace("\n", " ")
    try:  # every process learns whether any failed (their sets' rounds must stay in step)
        errs = [v.decode(errors="replace") for v in agree(s, (err or "").encode())]
        first = next((f"process {i}: {e}" for i, e in enumerate(errs) if e), None)
        if not first:
            per_rep = np.max(np.frombuffer(b"".join(s.allgather(np.array(times, np.float64).tobytes())),
                                           np.float64).reshape(nproc, -1), axis=0)
    except ValueError as e:  # the store set failed (a peer's mismatch, abort, death): this column with it
        first = f"store set: {e}"
    if first:
        return dict(ran=False, failed=first[:800])
    return dict(ran=True, seconds=float(np.median(per_rep)), min=float(per_rep.min()), times=per_rep.tolist(),
                resid=chk["resid"], resid_ok=chk["ok"], **info)


def memory() -> dict:
    """This process's GPU memory in MiB before a column: the driver's free
    bytes (cudaMemGetInfo through the libcudart this process loaded, None
    where there is none) and XLA's pool (in use, its peak), so that a
    column refused for memory says who held it (2026-11-27, 2 x H200:
    potrs 65536 found 12 GiB free of 141 after two rows)."""
    import ctypes
    out = {}
    try:
        st = jax.local_devices()[0].memory_stats() or {}
        out.update(xla_in_use=st.get("bytes_in_use", 0) >> 20, xla_peak=st.get("peak_bytes_in_use", 0) >> 20)
    except Exception:  # noqa: BLE001 - the cpu platform has no stats
        pass
    try:
        rt = ctypes.CDLL("libcudart.so.13")
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        if rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)) == 0:
            out.update(free=free.value >> 20, total=total.value >> 20)
    except OSError:
        pass
    return out


def jaxmg_tile(row):
    """cusolvermp's tile for this row where the muster part recorded it (the
    default column's eager call), else --jaxmg-tile."""
    if SPEC.get("jaxmg_tile_fixed"):
        return SPEC["jaxmg_tile"]
    done = bench.find_row(bench.read_json(SPEC["json"]), row)
    got = (done or {}).get("columns", {}).get("default", {})
    return got["tile"] if got.get("provider") == "cusolvermp" and got.get("tile") else SPEC["jaxmg_tile"]


def main():
    s = md.store_set(timeout=SPEC["timeout"])
    ctx = columns.Ctx(proc, nproc, s, SPEC["grid"])
    for r in SPEC["rows"]:
        row = columns.Row(r["routine"], r["n"], r["nrhs"], r["seed"], r.get("m"))
        tile = int(agree(s, str(jaxmg_tile(r) if "jaxmg" in SPEC["columns"] else 0).encode())[0])  # rank 0's
        opts = dict(mp_provider=SPEC["mp_provider"], jaxmg_tile=tile)
        for name in SPEC["columns"]:
            est = bench.estimate(r["routine"], r["n"], nproc, name, SPEC["warmup"], SPEC["reps"], row.m)
            left = SPEC["deadline"] - time.time()
            go = agree(s, b"1" if proc == 0 and est <= left else b"0")[0] == b"1"  # rank 0 decides for all
            t0, mem = time.monotonic(), memory()
            if bench.applies(name, row.routine):  # the same on every process: no round needed
                res = dict(ran=False, skipped=bench.applies(name, row.routine))
            elif not go:
                res = dict(ran=False, skipped=f"budget: about {est:.0f} s needed, {max(0.0, left):.0f} s left")
            else:
                res = run_column(s, ctx, row, name, opts)
            if res["ran"] or res.get("failed"):  # every process's, beside the column's result
                res["memory_before"] = [json.loads(v) for v in agree(s, json.dumps(mem).encode())]
            if proc == 0:
                bench.put_column(SPEC["json"], r, name, res)
            state = f"{res['seconds']:.4f} s" if res["ran"] else res.get("failed") or res.get("skipped")
            say(f"{r['routine']} n={bench.shape(r)} {name}: {state} ({res.get('provider', '-')}; "
                f"resid ok {res.get('resid_ok')}; {time.monotonic() - t0:.1f} s; MiB before: {mem})")
            try:  # every process, every column (a skipped one too: the same sequence everywhere)
                mj.release()
            except ValueError as e:
                say(f"release after {name}: {e}")
            if res.get("failed") and "store set" in res["failed"]:
                s = md.store_set(timeout=SPEC["timeout"])  # a failed set stays failed: a new one
                ctx.store = s
    s.close()
    say("done")
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
