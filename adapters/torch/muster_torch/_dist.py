"""One rank per process (torchrun / torch.distributed): the muster group of
a process group, and the gathers the derivatives need.

Group name.  Every process group (PG) gets one muster group name,
"th.<12 hex digits>": the first muster call on a PG draws 6 random bytes on
the PG's rank 0 (secrets) and broadcasts them over that PG, once; later
calls reuse the name.  The broadcast waits at most the call's timeout
(timeout=, else $MUSTER_TIMEOUT, as the runtime's own waits): a rank that
never makes its first call makes the others raise TimeoutError, not wait for
the PG's own timeout (30 minutes by default for gloo).  On a PG that is NCCL
only, the wait is NCCL's (its watchdog, 10 minutes by default): use a PG
with gloo for CPU tensors ("cpu:gloo,cuda:nccl") to get the bound.
So the name is shared exactly by the members of that PG, and two jobs on
one node, or two PGs of one job (including two with the same ranks), never
share a group, whatever MUSTER_JOB says.  Calls on one PG run one after
another in the same order on every rank, as torch.distributed requires of
its own collectives; a call that reaches the group while the previous one
is still there simply meets it at the next generation.

The broadcast is a collective of the PG itself (public API, every backend;
a CUDA tensor for a PG that is NCCL only) rather than a key in the job's store: the store is reached only through
private functions, and a key derived from the PG's name could be left over
from an earlier PG of the same name.
"""
import datetime
import secrets
import threading
import weakref

import torch
import torch.distributed as dist

if dist.is_available():
    # Now, before the caller's init_process_group, not at our first op:
    # torch.library's first call imports torch._dynamo, which imports this
    # module, whose functions take `group=group.WORLD` as a default value;
    # imported after init_process_group they hold the world process group
    # for the life of the interpreter (10 references), past
    # destroy_process_group, and gloo's teardown at interpreter exit then
    # ended 3 runs in 70 of the docs' torchrun example under load with
    # "terminate called without an active exception" (2026-11-27).
    import torch.distributed.nn.functional  # noqa: F401

from . import _lib, _runtime

_lock = threading.Lock()
# Weak both ways: a process group is freed when torch.distributed lets it go
# (destroy_process_group), not when the interpreter tears this module down
# (see the import above for what that did).
_names = weakref.WeakKeyDictionary()     # process group -> muster group name
_groups = weakref.WeakValueDictionary()  # muster group name -> process group (the derivatives' gathers)


def group_name(pg, timeout: float | None = None) -> str:
    """The muster group name of process group `pg` (collective on first use;
    TimeoutError when a rank is missing after `timeout`, module docstring)."""
    with _lock:
        name = _names.get(pg)
    if name is not None:
        return name
    dev = f"cuda:{torch.cuda.current_device()}" if dist.get_backend(pg) == "nccl" else "cpu"
    box = torch.zeros(6, dtype=torch.uint8, device=dev)
    if dist.get_rank(pg) == 0:
        box.copy_(torch.tensor(list(secrets.token_bytes(6)), dtype=torch.uint8))
    work = dist.broadcast(box, src=dist.get_global_rank(pg, 0), group=pg, async_op=True)
    _wait(work, pg, timeout, "the group's first muster call")
    name = "th." + bytes(box.cpu().tolist()).hex()
    with _lock:
        _names[pg], _groups[name] = name, pg
    return name


def _wait(work, pg, timeout, what):
    """Wait for a collective of pg at most the call's timeout (timeout=, else
    $MUSTER_TIMEOUT); MusterTimeoutError naming `what` after that."""
    wait = _runtime.timeout_seconds(_lib.runtime(), timeout)
    try:
        work.wait(**({"timeout": datetime.timedelta(seconds=wait)} if wait > 0 else {}))
    except RuntimeError as e:  # the backends' "timed out"; nothing is cached
        raise _lib.MusterTimeoutError(
            f"muster_torch: rank {dist.get_rank(pg)} of a process group of "
            f"{dist.get_world_size(pg)}: {what} did not reach every "
            f"rank within {wait:g} s (a rank not calling, or calling another op): {e}",
            kind="deadline_exceeded") from None


def process_group(name: str):
    """The process group a muster group name was derived from."""
    with _lock:
        return _groups[name]


def resolve(group, timeout: float | None = None) -> tuple[str, int, int]:
    """(muster group name, rank, nranks) for a process group."""
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("muster_torch: group= needs torch.distributed.init_process_group first")
    return group_name(group, timeout), dist.get_rank(group), dist.get_world_size(group)


def gather_columns(shards, group: str, nranks: int, ncols: int | None = None):
    """The whole matrix (m x n; n = ncols, default m: square) from its
    column blocks.

    group == "": `shards` is every block (one process): concatenated on the
    first block's device.  Otherwise `shards` is this rank's block only: an
    all_gather over the process group (blocks padded to the widest,
    ceil(n/nranks) columns, the runtime's block layout), on every rank."""
    if not group:
        home = shards[0].device
        return torch.cat([s.to(home) for s in shards], dim=1)
    mine = shards[0]
    m = mine.shape[0]
    n = m if ncols is None else ncols
    width = -(-n // nranks)
    padded = torch.zeros((m, width), dtype=mine.dtype, device=mine.device)
    padded[:, :mine.shape[1]] = mine
    parts = [torch.empty_like(padded) for _ in range(nranks)]
    dist.all_gather(parts, padded, group=process_group(group))
    return torch.cat(parts, dim=1)[:, :n]


def total_columns(width: int, group, timeout: float | None = None) -> int:
    """The sum over process group `group` of each rank's `width` (gels's n,
    which no rank can tell from its own block): an all_reduce waiting at
    most the call's timeout, as group_name's broadcast."""
    dev = f"cuda:{torch.cuda.current_device()}" if dist.get_backend(group) == "nccl" else "cpu"
    box = torch.tensor([int(width)], dtype=torch.int64, device=dev)
    _wait(dist.all_reduce(box, group=group, async_op=True), group, timeout,
          "the column count of gels's A")
    return int(box.item())


def block_shapes(shape, group, timeout: float | None = None) -> list[tuple[int, int]]:
    """Every rank's (rows, columns) of its block, in rank order: an
    all_gather over process group `group`, waiting at most the call's
    timeout as group_name's broadcast.  For the factorizations, whose A
    may be wide or tall: every rank learns n and can tell, before the
    rendezvous, whether the ranks' blocks make one matrix (all ranks see
    the same list, so all refuse alike)."""
    dev = f"cuda:{torch.cuda.current_device()}" if dist.get_backend(group) == "nccl" else "cpu"
    mine = torch.tensor([int(shape[0]), int(shape[1])], dtype=torch.int64, device=dev)
    parts = [torch.empty_like(mine) for _ in range(dist.get_world_size(group))]
    _wait(dist.all_gather(parts, mine, group=group, async_op=True), group, timeout,
          "the block shapes of the factorization's A")
    return [tuple(int(v) for v in p.cpu().tolist()) for p in parts]
