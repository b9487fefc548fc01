"""muster_torch on one GPU against torch.linalg on the same GPU and against
the C path of the same call (docs/performance/torch.md).

usage: python3 tests/python/torch/bench_gpu.py [--n 16384,32768] [--reps 5]
           [--routines potrs,syevd] [--build build] [--json FILE]

For each routine and N (f64, A = sym(U[0,1)) + N*I made on cuda:0, one
right-hand side for potrs), the median wall time of --reps calls after one
warm-up, each ended by torch.cuda.synchronize():
  muster_torch  muster_torch.potrs / syevd on one block (cuda:0): the
                adapter and the runtime, forced to $MUSTER_BENCH_PROVIDER
                (default cusolverdn, the one-GPU engine);
  C path        `muster solve ROUTINE --ranks 1 --reps K` forced to the same
                provider (its "time": muster_solve's wall, inputs already on
                the GPU), the same N and dtype;
  torch         torch.linalg.cholesky + torch.cholesky_solve, or
                torch.linalg.eigh.
Every muster_torch answer is residual-checked.  The adapter's cost is
muster_torch / C path - 1 (the issue's goal: <= 5%).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "adapters" / "torch"))


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def make_spd(n):
    g = torch.Generator(device="cuda:0").manual_seed(n)
    u = torch.rand(n, n, dtype=torch.float64, device="cuda:0", generator=g)
    a = (u + u.T) * 0.5
    a.diagonal().add_(n)
    return a


def c_path(build, routine, n, reps, provider):
    cmd = [str(build / "bin" / "muster"), "solve", routine, "--n", str(n), "--ranks", "1", "--dtype", "f64",
           "--provider", provider, "--reps", str(reps), "--warmup", "1", "--json"]
    env = dict(os.environ, MUSTER_PROVIDER_PATH=str(build / "lib" / "muster" / "providers"))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if out.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), out.stderr.strip()))
    res = json.loads(out.stdout)
    if not res.get("ok"):
        raise RuntimeError("%s: not ok: %s" % (" ".join(cmd), out.stdout))
    return res["seconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="16384,32768")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--routines", default="potrs,syevd")
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--json")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    os.environ.setdefault("MUSTER_LIB_DIR", str(build / "lib"))
    import muster_torch as mt

    provider = os.environ.get("MUSTER_BENCH_PROVIDER", "cusolverdn")
    rows = []
    for routine in args.routines.split(","):
        for n in [int(x) for x in args.n.split(",")]:
            a = make_spd(n)
            b = torch.ones(n, 1, dtype=torch.float64, device="cuda:0")
            if routine == "potrs":
                def ours():
                    return mt.potrs([a], b, provider=provider)

                def theirs():
                    return torch.cholesky_solve(b, torch.linalg.cholesky(a))
                x = ours()
                res = float(torch.linalg.norm(a @ x - b) / (torch.linalg.norm(a) * torch.linalg.norm(x)))
            else:
                def ours():
                    return mt.syevd([a], provider=provider)

                def theirs():
                    return torch.linalg.eigh(a)
                w, v = ours()
                v = torch.cat(list(v), dim=1) if isinstance(v, (list, tuple)) else v
                res = float(torch.linalg.norm(a @ v - v * w) / (torch.linalg.norm(a) * n))
            assert res < 1e-12, "%s n=%d: residual %g" % (routine, n, res)
            t_ours = timed(ours, args.reps)
            t_torch = timed(theirs, args.reps)
            t_c = c_path(build, routine, n, args.reps, provider)
            row = {"routine": routine, "n": n, "dtype": "f64", "muster_torch_s": t_ours, "c_path_s": t_c,
                   "torch_s": t_torch, "adapter_overhead": t_ours / t_c - 1, "torch_over_muster": t_torch / t_ours,
                   "residual": res, "provider": provider, "reps": args.reps,
                   "device": torch.cuda.get_device_name(0), "torch": torch.__version__}
            rows.append(row)
            print("%s n=%d: muster_torch %.4f s, C path %.4f s (%+.1f%%), torch %.4f s (torch/muster %.2fx), residual %.1e"
                  % (routine, n, t_ours, t_c, 100 * row["adapter_overhead"], t_torch, row["torch_over_muster"], res),
                  flush=True)
            del a, b
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
