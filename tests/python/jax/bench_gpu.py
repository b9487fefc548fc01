"""muster_jax.potrs on 2 GPUs vs the C path of the same call, and vs
jax.scipy.linalg.cho_factor + cho_solve on one GPU (docs/performance/jax.md).

usage: python3 tests/python/jax/bench_gpu.py [--n 16384,32768] [--reps 3] [--json FILE]

For each N (f64, one right-hand side, A = sym(U[0,1)) + N*I, made on the GPUs):
  jax       wall time of muster_jax.potrs(A, b) to block_until_ready, A on 2
            GPUs (column-sharded, and row-sharded: a row block of a symmetric
            A needs no all-to-all), median of the repetitions;
  C path    rank 0's muster_solve time inside the same calls (the handler
            measures it: rendezvous + relayout + cuSolverMg + X to every
            rank), i.e. what a C program calling muster_solve pays;
  provider  the provider alone (muster_solve_result.seconds);
  1 GPU     jit(cho_solve(cho_factor(A), b)) on GPU 0, median.
Every answer is residual-checked.
"""
import argparse
import json
import os
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import muster_jax as mj  # noqa: E402


def make_spd(n, sharding, seed):
    """sym(U[0,1)) + n*I, diagonally dominant hence SPD, built in place."""
    def gen(key):
        u = jax.random.uniform(key, (n, n), jnp.float64)
        return (u + u.T) * 0.5 + n * jnp.eye(n, dtype=jnp.float64)
    return jax.jit(gen, out_shardings=sharding)(jax.random.key(seed))


def residual(a, x, b):
    """||A x - b|| / (||A|| ||x||), computed where A lives (x, b brought to it)."""
    dev = a.sharding
    x = jax.device_put(x, dev if not hasattr(dev, "spec") else jax.NamedSharding(dev.mesh, P(None, None)))
    b = jax.device_put(b, x.sharding)

    @jax.jit
    def r(a, x, b):
        return jnp.linalg.norm(a @ x - b) / (jnp.linalg.norm(a) * jnp.linalg.norm(x))
    return float(r(a, x, b))


def bench_muster(n, reps, mesh, spec):
    a = make_spd(n, NamedSharding(mesh, spec), 1)
    b = jax.device_put(jnp.ones((n, 1), jnp.float64), NamedSharding(mesh, P(None, None)))
    call = lambda: mj.potrs(a, b, mesh=mesh, in_specs=(spec, P(None, None)))  # noqa: E731
    x = call().block_until_ready()  # warm-up: compile, load the provider, caches
    walls, solves, provs = [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        x = call().block_until_ready()
        walls.append(time.perf_counter() - t0)
        st = mj.last_solve()
        solves.append(st["solve_s"])
        provs.append(st["provider_s"])
    res = residual(jax.device_put(a, NamedSharding(mesh, P(None, None))), x, b)
    del a
    return dict(wall=float(np.median(walls)), solve=float(np.median(solves)), provider=float(np.median(provs)),
                walls=walls, solves=solves, tile=st["tile"], backend=st["provider"], resid=res)


def bench_jax_1gpu(n, reps, dev):
    a = make_spd(n, jax.sharding.SingleDeviceSharding(dev), 1)
    b = jax.device_put(jnp.ones((n, 1), jnp.float64), dev)
    f = jax.jit(lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b))
    x = f(a, b).block_until_ready()
    walls = []
    for _ in range(reps):
        t0 = time.perf_counter()
        x = f(a, b).block_until_ready()
        walls.append(time.perf_counter() - t0)
    res = residual(a, x, b)
    del a
    return dict(wall=float(np.median(walls)), walls=walls, resid=res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="16384,32768")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--platform", default="gpu", help="cpu: try the script on host devices")
    args = ap.parse_args()
    gpus = jax.devices(args.platform)
    if len(gpus) < 2:
        print(f"bench_gpu: needs 2 {args.platform} devices", file=sys.stderr)
        return 1
    mesh = jax.make_mesh((2,), ("x",), devices=gpus[:2])
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# muster_jax potrs f64, 2 x {gpus[0].device_kind}, jax {jax.__version__}, {date}", flush=True)
    rows = []
    for n in (int(v) for v in args.n.split(",")):
        row = dict(n=n)
        for name, spec in (("cols", P(None, "x")), ("rows", P("x", None))):
            row[name] = bench_muster(n, args.reps, mesh, spec)
            print(n, name, json.dumps(row[name]), flush=True)
        row["jax1"] = bench_jax_1gpu(n, args.reps, gpus[0])
        print(n, "jax1", json.dumps(row["jax1"]), flush=True)
        rows.append(row)
    print("\n| N | muster_jax 2 GPUs, A cols (s) | A rows (s) | C path muster_solve (s) | provider (s) "
          "| JAX overhead vs C | cho_factor+cho_solve 1 GPU (s) | 1 GPU / muster_jax | tile |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        best = min(r["cols"]["wall"], r["rows"]["wall"])
        c = r["rows"]["solve"] if r["rows"]["wall"] <= r["cols"]["wall"] else r["cols"]["solve"]
        print(f"| {r['n']} | {r['cols']['wall']:.4f} | {r['rows']['wall']:.4f} | {c:.4f} | "
              f"{r['rows']['provider']:.4f} | {100 * (best - c) / c:+.1f}% | {r['jax1']['wall']:.4f} | "
              f"{r['jax1']['wall'] / best:.2f} | {r['rows']['tile']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(date=date, jax=jax.__version__, gpu=gpus[0].device_kind, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
