"""One rank of a torch.distributed job (gloo, CPU) meeting over the job's
store (muster_torch.distributed; test_store_distributed.py starts it).

usage: store_worker.py RANK WORLD PORT cases|gpu|fault_kill|fault_stop|gpu_kill|gpu_stop
"cases": storecase's basic case, its one-node case; grid= with each rank's own piece (gridcase.py, through the collective
test provider with TESTPROV_SUM=1): grids of every shape over all ranks and over pairs of ranks (sets on
a PrefixStore each), a DeviceMesh's DTensor, the hostile cases; then storecase's kill case on a last set
(the last process SIGKILLs itself).  "gpu": one GPU per rank, nccl, solves with residuals on column
blocks (storecase.solve_case) and on grids (gridcase.gpu_grid_case).  "fault_*", "gpu_*" but "gpu":
storefault.py's (the last rank SIGKILLed or SIGSTOPped inside the engine: the blocking test engine colltwo
on the CPU, cusolvermp's syevd on GPUs).  Prints "rank R: ... [S s]" lines (S: seconds since the rank
started), and every thread's Python stack on SIGUSR1 (storecase.worker_say).
"""
import datetime
import pathlib
import sys

rank, world, port, case = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/python

import storecase  # noqa: E402  (before torch: a hang in its start shows its stack too)

say = storecase.worker_say("rank", rank)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

on_gpu = case.startswith("gpu")
if on_gpu:
    torch.cuda.set_device(rank)
dist.init_process_group("nccl" if on_gpu else "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=60))

import numpy as np  # noqa: E402

import gridcase  # noqa: E402
import muster_torch.distributed as md  # noqa: E402

if case in ("fault_kill", "fault_stop", "gpu_kill", "gpu_stop"):
    import signal

    import storefault
    storefault.engine_fault_case(md, rank, world, say,
                                 (lambda x: torch.from_numpy(x).cuda()) if on_gpu else torch.from_numpy,
                                 signal.SIGKILL if case.endswith("kill") else signal.SIGSTOP,
                                 n=8192 if on_gpu else 40, provider="cusolvermp" if on_gpu else "colltwo",
                                 timeout=5 if on_gpu else 2, warm=on_gpu, delay=0.8 if on_gpu else 0.5)
s = md.store_set(timeout=20)
if case == "gpu":
    for provider in (None, "cusolvermp"):  # the default (one node: maybe a one-node engine), then cusolvermp
        storecase.solve_case(md, s, rank, world, say, lambda x: torch.from_numpy(x).cuda(),
                             lambda x: x.cpu().numpy(), provider=provider)
    gridcase.gpu_grid_case(md, s, rank, world, say, lambda x: torch.from_numpy(x).cuda(),
                           lambda x: x.cpu().numpy())
    import routinecase  # gels, geqrf, gesvd, polar
    routinecase.gpu_routines(md, s, say, lambda x: torch.from_numpy(np.ascontiguousarray(x)).cuda(),
                             lambda x: x.cpu().numpy())
    s.close()
    dist.destroy_process_group()
    say("done")
    sys.exit(0)
n, k = 12, -(-12 // world)
g = torch.Generator().manual_seed(7)
m = torch.randn(n, n, generator=g, dtype=torch.float64)
a, b = m @ m.T + n * torch.eye(n, dtype=torch.float64), torch.randn(n, 2, generator=g, dtype=torch.float64)
storecase.basic_case(md, s, rank, world, say, a[:, k * rank:k * rank + k], b, n)
storecase.one_node_case(md, rank, world, say, torch.from_numpy, lambda x: x.numpy())


def put(x):
    return torch.from_numpy(np.ascontiguousarray(x))


def host(x):
    return x.numpy()


def grids(procs, n):
    """Every grid of the processes `procs`: columns, rows and (4) 2 x 2."""
    p = len(procs)
    out = [md.mesh_grid(("x",), (p,), procs, (None, "x"), n), md.mesh_grid(("x",), (p,), procs, ("x", None), n)]
    if p == 4:
        out.append(md.mesh_grid(("pr", "pc"), (2, 2), procs, ("pr", "pc"), n))
    return out


def mesh_case(rng, n):
    """A DTensor on a 2 x 2 DeviceMesh: its local tensor is the piece of
    device_mesh_grid's grid, solved as it is; placements it refuses."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("pr", "pc"))
    a = torch.from_numpy(gridcase.rand(rng, (n, n), np.complex128))
    ad = distribute_tensor(a, mesh, [Shard(0), Shard(1)])
    grid = md.device_mesh_grid(mesh, ad.placements, n)
    assert ad.to_local().shape == gridcase.piece_of(a.numpy(), grid, rank, world).shape
    with md.store_set(timeout=20) as s:
        i, j = np.indices((n, n))
        want = np.sum(a.numpy() * (1.0 + i * n + j))
        x = md.solve("potrs", ad.to_local(), torch.zeros(n, 1, dtype=torch.complex128), n=n, store=s,
                     provider="colltwo", grid=grid)
        assert abs(x[0, 0].item() - want) < 1e-9 * np.abs(a.numpy()).sum() * n * n, (x[0, 0], want)
    gridcase.expect_refusal(lambda: md.device_mesh_grid(mesh, [Shard(0), Shard(0)], n), "one mesh dimension")
    gridcase.expect_refusal(lambda: md.device_mesh_grid(mesh, [Replicate(), Shard(1)], n), "Replicate on size 1")
    say("device mesh ok")


with md.store_set(timeout=20) as s:
    rng = np.random.default_rng(gridcase.seed(s, say))
    gridcase.sum_cases(md, s, [None] + grids(list(range(world)), 11), rank, world, rng, put, host, say, 11)
if world == 4:  # two sets of 2 ranks at once, each over its own prefix of the job's store
    pair = [rank - rank % 2, rank - rank % 2 + 1]
    with md.store_set(dist.PrefixStore(f"pair{pair[0]}/", md.default_store()), rank % 2, 2, timeout=20) as s:
        gridcase.sum_cases(md, s, grids(pair, 11), rank, 2, rng, put, host, say, 11)
    mesh_case(rng, 11)
gridcase.hostile_cases(md, lambda rank=None: md.store_set(timeout=20, rank=rank), rank, world, put, say)
if world == 4:  # gels, geqrf, gesvd, polar on the LAPACKE test engine: 3 ranks, then two pairs at once
    import routinecase
    kw = {"provider": "colllapack"}
    tri = rank < 3  # rank 3 opens a set of its own meanwhile: every rank's next set name stays in step
    with md.store_set(dist.PrefixStore("tri/" if tri else "solo/", md.default_store()), rank if tri else 0,
                      3 if tri else 1, timeout=20) as s:
        if tri:
            routinecase.routines_case(md, s, say, put, host, np.random.default_rng(gridcase.seed(s, say)),
                                      kw_of=lambda dtype: kw)
    with md.store_set(dist.PrefixStore(f"rpair{rank - rank % 2}/", md.default_store()), rank % 2, 2, timeout=20) as s:
        routinecase.routines_case(md, s, say, put, host, np.random.default_rng(gridcase.seed(s, say)),
                                  kw_of=lambda dtype: kw)
    routinecase.hostile_routines(md, lambda: md.store_set(timeout=20), rank, say, put, kw)
storecase.kill_case(md.store_set(timeout=2), rank, world, say)  # does not return
