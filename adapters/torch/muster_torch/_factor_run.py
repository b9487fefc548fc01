"""geqrf, gesvd and polar through libmuster, and the factors read back out
of A, B and W (docs/factorizations.md): for one whole matrix in this
process (muster_solve_all over its column blocks), or, with group=, for
this rank's column block of a matrix spread over a process group
(muster_solve_named, one rank per process).

The placement of the factors is the runtime's one rule,
muster_routine_outputs (include/muster/layout.h), read through libmuster's
muster_routine_outputs_flat (_runtime.routine_outputs).
"""
import ctypes
import types

import torch

from . import _api, _buffers, _dist, _lib, _runtime, _solve
from ._buffers import host_pool, ptr

FULL_MATRICES = 0x8  # MUSTER_FULL_MATRICES (include/muster.h)
NO_VECTORS = _runtime.NO_VECTORS


def outputs(routine: str, flags: int, m: int, n: int) -> dict:
    """muster_routine_outputs(routine, flags, m, n) as _runtime.routine_outputs
    gives it: "a_holds" (the factor A's array holds, or None), "parts"
    [(name, rows, cols, offset in B)], "b_cols", "w_count"."""
    lib = _lib.runtime()
    return _runtime.routine_outputs(lib, _runtime.enum_value(lib, "routine", routine), flags, m, n)


def factor(routine: str, flags: int, A: torch.Tensor, devices=None, tile=None, provider=None,
           timeout=None, group=None) -> dict:
    """The factors of one m x n A, {name: tensor on A's device, "S": the
    singular values}; A's column blocks over `devices` (a count of CPU
    ranks or a list of devices; None: one rank).  timeout is taken for the
    linalg functions' signature: muster_solve_all has no rendezvous to
    wait for.  With group= (a process group), A is this rank's column
    block instead: _factor_group."""
    if group is not None:
        return _factor_group(routine, flags, A, group, tile, provider, timeout)
    m, n = A.shape
    rule = outputs(routine, flags, m, n)
    blocks = [A] if devices is None else _api.split_columns(A, devices)
    bcols = max(rule["b_cols"], 1)
    ranks, c0 = [], 0
    for t in blocks:
        ranks.append(_rank(t, c0, m, bcols, rule["w_count"]))
        c0 += t.shape[1]
    args = _args(routine, A.dtype, n, bcols, tile, flags, provider)
    res = _runtime.new_result()
    arr = (_runtime.Shard * len(ranks))(*[r.shard for r in ranks])
    rc = _lib.runtime().muster_solve_all(ctypes.byref(args), len(ranks), arr, ctypes.byref(res))
    if rc:
        raise _lib.error(rc, f"muster_torch.{routine} ({len(ranks)} ranks in this process)", res.info)
    return _read(rule, ranks, A.device, m, n)


def _factor_group(routine, flags, A, group, tile, provider, timeout) -> dict:
    """factor() for rank r of a process group passing its own m x k_r block
    of A: every rank gets the factor the runtime leaves in A's place
    (muster_routine_outputs' a_holds) as its own column block of it, and
    the factors packed into B and the singular values whole.  n is learned
    from the ranks' block shapes (one all_gather), which also lets every
    rank refuse inconsistent blocks alike before the rendezvous."""
    name, rank, nranks = _dist.resolve(group, timeout)
    m, n = _whole_shape(routine, _dist.block_shapes(A.shape, group, timeout))
    rule = outputs(routine, flags, m, n)
    req = _solve.Request(routine, [A], name, rank, nranks, int(tile or 0), str(provider or ""),
                         float(timeout or 0.0))
    try:  # a failure here (memory) would leave the peers waiting: tell them, as _solve.run
        c0 = _runtime.block_cols(_lib.runtime(), n, nranks, rank)[0]
        me = _rank(A, c0, m, max(rule["b_cols"], 1), rule["w_count"], pool=name)
    except Exception as e:
        _solve._abort_peers(req, e)
        raise
    _solve._call(req, _args(routine, A.dtype, n, max(rule["b_cols"], 1), tile, flags, provider), [me])
    return _read(rule, [me], A.device, m, n)


def _whole_shape(routine, shapes) -> tuple[int, int]:
    """(m, n) of the matrix whose blocks the ranks hold (shapes: each rank's
    (rows, columns)); ValueError naming A when they are not one matrix's
    blocks in the runtime's block layout."""
    who = f"muster_torch.{routine} over a process group of {len(shapes)}"
    if len({s[0] for s in shapes}) > 1:
        rows = ", ".join(f"rank {r}: {s[0]}" for r, s in enumerate(shapes))
        raise ValueError(f"{who}: A's blocks have different row counts ({rows}): every rank "
                         "passes its column block of the same m x n A, all m rows")
    m, n = shapes[0][0], sum(s[1] for s in shapes)
    if m < 1 or n < 1:
        raise ValueError(f"{who}: A is {m} x {n}: no rows or no columns")
    for r, (_, k) in enumerate(shapes):
        want = _runtime.block_cols(_lib.runtime(), n, len(shapes), r)[1]
        if k != want:
            raise ValueError(f"{who}: rank {r}'s block of A has {k} columns; the block layout of "
                             f"n={n} columns over {len(shapes)} ranks gives it {want} "
                             "(muster_torch.block_columns)")
    return m, n


def _args(routine, dtype, n, bcols, tile, flags, provider):
    return _runtime.SolveArgs(
        routine=_runtime.enum_value(_lib.runtime(), "routine", routine), dtype=_buffers.muster_dtype(dtype),
        n=n, nrhs=bcols, tile=tile or 0, layout=_runtime.LAYOUT_BLOCK, flags=flags,
        provider=provider.encode() if provider else None)


def _rank(t, col0, m, bcols, wcount, pool=None):
    """One rank's buffers and muster_shard_t.  pool: the muster group of a
    process group; CPU buffers then come from host_pool (memory the other
    processes can map), and _read copies the results out of them."""
    def buf(role, shape, dt):
        if pool and t.device.type == "cpu":
            return host_pool.view(pool, role, shape, dt).zero_()
        return torch.zeros(shape, dtype=dt, device=t.device)

    a = _buffers.column_major(t, buf("a", (t.shape[1], m), t.dtype))
    b = buf("b", (bcols, m), t.dtype)
    w = buf("w", (max(wcount, 1),), _buffers.real_dtype(t.dtype))
    cuda = t.device.type == "cuda"
    shard = _runtime.Shard(mem=_runtime.MEM_CUDA if cuda else _runtime.MEM_HOST,
                           device=t.device.index if cuda else -1, a=ptr(a), lda=m, col0=col0,
                           ncols=t.shape[1], b=ptr(b), ldb=m, w=ptr(w), stream=_buffers.stream_of(t.device))
    return types.SimpleNamespace(a=a, b=b, w=w, shard=shard)  # _solve._call reads .shard


def _read(rule, ranks, device, m, n):
    flat = ranks[0].b.reshape(-1)  # B, column-major: its elements in order
    got = {name: flat[off:off + rows * cols].reshape(cols, rows).mT.to(device).clone()
           for name, rows, cols, off in rule["parts"]}
    if rule["a_holds"]:
        got[rule["a_holds"]] = torch.cat([r.a.mT.to(device) for r in ranks], dim=1)[:, :n].clone()
    if rule["w_count"]:
        got["S"] = ranks[0].w[:rule["w_count"]].to(device).clone()
    return got
