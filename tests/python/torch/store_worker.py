"""One rank of a torch.distributed job (gloo, CPU) meeting over the job's
store (muster_torch.distributed; test_store_distributed.py starts it).

usage: store_worker.py RANK WORLD PORT cases|gpu
"cases": storecase's basic case, then its kill case on a second set
(the last process SIGKILLs itself).  The cases are tests/python/storecase.py's ("gpu": one GPU per rank, nccl,
solves with residuals).  Prints "rank R: ..." lines.
"""
import datetime
import pathlib
import sys

rank, world, port, case = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/python

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

if case == "gpu":
    torch.cuda.set_device(rank)
dist.init_process_group("nccl" if case == "gpu" else "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=60))

import muster_torch.distributed as md  # noqa: E402
import storecase  # noqa: E402


def say(*what):
    print(f"rank {rank}:", *what, flush=True)


s = md.store_set(timeout=20)
if case == "gpu":
    storecase.solve_case(md, s, rank, world, say, lambda x: torch.from_numpy(x).cuda(),
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
storecase.kill_case(md.store_set(timeout=2), rank, world, say)  # does not return
