"""jax.grad through muster_jax.potrs on 2 GPUs against the forward solve
alone, and against the same gradient through jax.scipy.linalg.cho_solve on
one GPU (issue 16's performance goal: the backward pass factors nothing
again, grad < 1.5x the forward).

usage: python3 tests/python/jax/bench_grad_gpu.py [--n 16384,32768] [--reps 3] [--json FILE]

For each N (f64, one right-hand side, A = sym(U[0,1)) + N*I, column-sharded
over the GPUs), medians of wall times to block_until_ready of jitted
programs:
  fwd       sum(potrs(A, b))
  grad      grad of sum(potrs(A, b)) with respect to A and b
  1gpu_grad the same gradient through cho_solve(cho_factor(A), b) on GPU 0
The gradients are checked: b_bar must solve A b_bar = 1 (residual printed).
"""
import argparse
import json
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import muster_jax as mj  # noqa: E402
from bench_gpu import make_spd  # noqa: E402


def median_time(fn, args, reps):
    jax.block_until_ready(fn(*args))  # compile and warm up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="16384,32768")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    gpus = jax.devices("gpu")[:2]
    mesh = jax.make_mesh((2,), ("x",), devices=gpus)
    rows = []
    for n in map(int, args.n.split(",")):
        a = make_spd(n, NamedSharding(mesh, P(None, "x")), 1)
        b = jax.device_put(jnp.ones((n, 1), jnp.float64), NamedSharding(mesh, P(None, None)))
        loss = lambda a, b: jnp.sum(mj.potrs(a, b, mesh=mesh))  # noqa: E731
        with jax.set_mesh(mesh):
            fwd = jax.jit(loss)
            grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
            t_fwd = median_time(fwd, (a, b), args.reps)
            t_grad = median_time(grad, (a, b), args.reps)
            _, gb = grad(a, b)
            res = float(jnp.linalg.norm(a @ gb - 1) / (jnp.linalg.norm(a) * jnp.linalg.norm(gb)))
        a1 = jax.device_put(a, gpus[0])
        b1 = jax.device_put(b, gpus[0])
        def loss1(a, b):
            return jnp.sum(jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b))
        try:
            t_one = median_time(jax.jit(jax.grad(loss1, argnums=(0, 1))), (a1, b1), args.reps)
        except Exception as e:  # one GPU may not hold A and its cotangent at the largest N
            t_one = None
            print("1 GPU:", type(e).__name__, str(e)[:200])
        row = dict(n=n, fwd_s=t_fwd, grad_s=t_grad, ratio=t_grad / t_fwd, one_gpu_grad_s=t_one,
                   grad_b_residual=res)
        print(json.dumps(row), flush=True)
        rows.append(row)
        del a, b, a1, b1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
