"""geqrf, gesvd and polar through libmuster for one whole matrix in this
process (muster_solve_all over its column blocks), and the factors read
back out of A, B and W (docs/factorizations.md).

The placement of the factors is the runtime's one rule,
muster_routine_outputs (include/muster/layout.h), read through libmuster's
muster_routine_outputs_flat (_runtime.routine_outputs).
"""
import ctypes

import torch

from . import _api, _buffers, _lib, _runtime
from ._buffers import ptr

FULL_MATRICES = 0x8  # MUSTER_FULL_MATRICES (include/muster.h)
NO_VECTORS = _runtime.NO_VECTORS


def outputs(routine: str, flags: int, m: int, n: int) -> dict:
    """muster_routine_outputs(routine, flags, m, n) as _runtime.routine_outputs
    gives it: "a_holds" (the factor A's array holds, or None), "parts"
    [(name, rows, cols, offset in B)], "b_cols", "w_count"."""
    lib = _lib.runtime()
    return _runtime.routine_outputs(lib, _runtime.enum_value(lib, "routine", routine), flags, m, n)


def factor(routine: str, flags: int, A: torch.Tensor, devices=None, tile=None, provider=None,
           timeout=None) -> dict:
    """The factors of one m x n A, {name: tensor on A's device, "S": the
    singular values}; A's column blocks over `devices` (a count of CPU
    ranks or a list of devices; None: one rank).  timeout is taken for the
    linalg functions' signature: muster_solve_all has no rendezvous to
    wait for."""
    m, n = A.shape
    rule = outputs(routine, flags, m, n)
    blocks = [A] if devices is None else _api.split_columns(A, devices)
    bcols = max(rule["b_cols"], 1)
    ranks, c0 = [], 0
    for t in blocks:
        ranks.append(_rank(t, c0, m, bcols, rule["w_count"]))
        c0 += t.shape[1]
    args = _runtime.SolveArgs(
        routine=_runtime.enum_value(_lib.runtime(), "routine", routine), dtype=_buffers.muster_dtype(A.dtype),
        n=n, nrhs=bcols, tile=tile or 0, layout=_runtime.LAYOUT_BLOCK, flags=flags,
        provider=provider.encode() if provider else None)
    res = _runtime.new_result()
    arr = (_runtime.Shard * len(ranks))(*[r["shard"] for r in ranks])
    rc = _lib.runtime().muster_solve_all(ctypes.byref(args), len(ranks), arr, ctypes.byref(res))
    if rc:
        raise _lib.error(rc, f"muster_torch.{routine} ({len(ranks)} ranks in this process)", res.info)
    return _read(rule, ranks, A.device, m, n)


def _rank(t, col0, m, bcols, wcount):
    a = _buffers.column_major(t)
    b = torch.zeros((bcols, m), dtype=t.dtype, device=t.device)
    w = torch.zeros((max(wcount, 1),), dtype=_buffers.real_dtype(t.dtype), device=t.device)
    cuda = t.device.type == "cuda"
    shard = _runtime.Shard(mem=_runtime.MEM_CUDA if cuda else _runtime.MEM_HOST,
                           device=t.device.index if cuda else -1, a=ptr(a), lda=m, col0=col0,
                           ncols=t.shape[1], b=ptr(b), ldb=m, w=ptr(w), stream=_buffers.stream_of(t.device))
    return {"a": a, "b": b, "w": w, "shard": shard}


def _read(rule, ranks, device, m, n):
    flat = ranks[0]["b"].reshape(-1)  # B, column-major: its elements in order
    got = {name: flat[off:off + rows * cols].reshape(cols, rows).mT.to(device).clone()
           for name, rows, cols, off in rule["parts"]}
    if rule["a_holds"]:
        got[rule["a_holds"]] = torch.cat([r["a"].mT.to(device) for r in ranks], dim=1)[:, :n].clone()
    if rule["w_count"]:
        got["S"] = ranks[0]["w"][:rule["w_count"]].to(device).clone()
    return got
