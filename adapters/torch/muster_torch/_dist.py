"""One rank per process (torchrun / torch.distributed): the muster group of
a process group, and the gathers the derivatives need.

Group name.  Every process group (PG) gets one muster group name,
"th.<12 hex digits>": the first muster call on a PG draws the digits on the
PG's rank 0 (secrets.token_hex) and broadcasts them over that PG
(torch.distributed.broadcast_object_list), once; later calls reuse the name.
So the name is shared exactly by the members of that PG, and two jobs on
one node, or two PGs of one job (including two with the same ranks), never
share a group, whatever MUSTER_JOB says.  Calls on one PG run one after
another in the same order on every rank, as torch.distributed requires of
its own collectives; a call that reaches the group while the previous one
is still there simply meets it at the next generation.

The broadcast is a collective of the PG itself (public API, every backend)
rather than a key in the job's store: the store is reached only through
private functions, and a key derived from the PG's name could be left over
from an earlier PG of the same name.
"""
import secrets
import threading

import torch
import torch.distributed as dist

_lock = threading.Lock()
_names = {}   # process group -> muster group name
_groups = {}  # muster group name -> process group (for the derivatives' gathers)


def group_name(pg) -> str:
    """The muster group name of process group `pg` (collective on first use)."""
    with _lock:
        name = _names.get(pg)
    if name is None:
        box = [("th." + secrets.token_hex(6)) if dist.get_rank(pg) == 0 else None]
        dist.broadcast_object_list(box, src=dist.get_global_rank(pg, 0), group=pg)
        name = box[0]
        with _lock:
            _names[pg], _groups[name] = name, pg
    return name


def process_group(name: str):
    """The process group a muster group name was derived from."""
    with _lock:
        return _groups[name]


def resolve(group) -> tuple[str, int, int]:
    """(muster group name, rank, nranks) for a process group."""
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("muster_torch: group= needs torch.distributed.init_process_group first")
    return group_name(group), dist.get_rank(group), dist.get_world_size(group)


def gather_columns(shards, group: str, nranks: int):
    """The whole n x n matrix from its column blocks.

    group == "": `shards` is every block (one process): concatenated on the
    first block's device.  Otherwise `shards` is this rank's block only: an
    all_gather over the process group (blocks padded to the widest,
    ceil(n/nranks) columns, the runtime's block layout), on every rank."""
    if not group:
        home = shards[0].device
        return torch.cat([s.to(home) for s in shards], dim=1)
    mine = shards[0]
    n = mine.shape[0]
    width = -(-n // nranks)
    padded = torch.zeros((n, width), dtype=mine.dtype, device=mine.device)
    padded[:, :mine.shape[1]] = mine
    parts = [torch.empty_like(padded) for _ in range(nranks)]
    dist.all_gather(parts, padded, group=process_group(group))
    return torch.cat(parts, dim=1)[:, :n]
