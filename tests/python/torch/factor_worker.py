"""Scenario "factors" of the one-rank-per-process tests (torch_worker.py
runs it; test_torch_factor_dist.py checks what it writes): qr, svd,
svdvals and polar with group=, each rank passing its column block of a
square, a tall and a wide A (over 3 ranks the tall one leaves the last rank
no column).  Each rank gathers the factor the runtime left in A's place
(muster_routine_outputs' a_holds, asked of libmuster) from every rank's
block and checks the whole factors against torch.linalg on the whole A
(factor_checks.py); then vmap and a 3-D batch over the group, blocks
that are not one matrix's (every rank must refuse them alike), and
gradcheck of every backward over the group (factor_grad_checks.py)."""
import traceback

import torch

import factor_checks as fc
import factor_grad_checks
import muster_torch as mt
from muster_torch import _dist, _factor_run

DTYPES = (torch.float64, torch.complex64, torch.float32, torch.complex128)
SHAPES = ((6, 6), (9, 4), (5, 7))  # square, tall, wide


def _gathered(pg, routine, flags, a, got):
    """got (name -> the rank's result) with the factor in A's place
    gathered whole from every rank's block."""
    m, n = a.shape
    holds = _factor_run.outputs(routine, flags, m, n)["a_holds"]
    out = dict(got)
    if holds:
        name = mt.group_name(pg)
        out[holds] = _dist.gather_columns([got[holds]], name, pg.size(), ncols=n)
    return out


def _one(pg, rank, nranks, A):
    c0, k = mt.block_columns(A.shape[1], nranks, rank)
    a = A[:, c0:c0 + k]
    for mode, flags in (("reduced", 0), ("complete", _factor_run.FULL_MATRICES)):
        q, r = mt.linalg.qr(a, mode, group=pg)
        g = _gathered(pg, "geqrf", flags, A, {"Q": q, "R": r})
        fc.check_qr(A, g["Q"], g["R"], mode)
    for full in (False, True):
        u, s, vh = mt.linalg.svd(a, full, group=pg)
        g = _gathered(pg, "gesvd", _factor_run.FULL_MATRICES if full else 0, A, {"U": u, "VH": vh})
        fc.check_svd(A, g["U"], s, g["VH"], full)
    fc.check_svdvals(A, mt.linalg.svdvals(a, group=pg))
    u, p = mt.linalg.polar(a, group=pg)
    fc.check_polar(A, _gathered(pg, "polar", 0, A, {"UP": u})["UP"], p)


def _batched(pg, rank, nranks, gen):
    """A (3, m, n) batch and torch.func.vmap over the group: one collective
    call per element, each checked against torch.linalg."""
    As = torch.stack([fc.mat(gen, 7, 5, torch.float64) for _ in range(3)])
    c0, k = mt.block_columns(5, nranks, rank)
    blocks = As[:, :, c0:c0 + k]
    q, r = mt.linalg.qr(blocks, group=pg)
    s = torch.func.vmap(lambda x: mt.linalg.svdvals(x, group=pg))(blocks)
    u, p = torch.func.vmap(lambda x: mt.linalg.polar(x, group=pg))(blocks)
    vu, vs, vvh = torch.func.vmap(lambda x: mt.linalg.svd(x, full_matrices=False, group=pg))(blocks)
    assert q.shape == (3, 7, k) and s.shape == (3, 5) and u.shape == (3, 7, k), (q.shape, s.shape, u.shape)
    for i in range(3):
        fc.check_qr(As[i], _gathered(pg, "geqrf", 0, As[i], {"Q": q[i]})["Q"], r[i], "reduced")
        fc.check_svdvals(As[i], s[i])
        fc.check_polar(As[i], _gathered(pg, "polar", 0, As[i], {"UP": u[i]})["UP"], p[i])
        fc.check_svd(As[i], _gathered(pg, "gesvd", 0, As[i], {"U": vu[i]})["U"], vs[i], vvh[i], False)


def _refusals(pg, rank, nranks, gen):
    """Blocks that are not one matrix's: every rank raises ValueError naming
    A; polar's side="left" and devices= refused with group=, and the
    backward of a full SVD of a tall A; the group still works afterwards."""
    A = fc.mat(gen, 6, 2 * nranks, torch.float64)
    c0, k = mt.block_columns(A.shape[1], nranks, rank)
    rows = A[:5 if rank == 1 else 6, c0:c0 + k]  # rank 1 passes 5 rows, the others 6
    for bad, want in ((rows, "A's blocks have different row counts (rank 0: 6, rank 1: 5"),
                      (A[:, c0:c0 + k - (1 if rank == 0 else 0)], "block of A has")):
        try:
            mt.linalg.qr(bad, group=pg)
        except ValueError as e:
            assert want in str(e), str(e)
        else:
            raise AssertionError("inconsistent blocks accepted")
    for kw in ({"side": "left"}, {"devices": 2}):
        try:
            mt.linalg.polar(A[:, c0:c0 + k], group=pg, **kw)
        except ValueError as e:
            assert list(kw)[0] in str(e), str(e)
        else:
            raise AssertionError(f"polar {kw} accepted with group=")
    T = fc.mat(gen, 2 * nranks + 2, 2 * nranks, torch.float64)  # tall over any number of ranks
    x = T[:, c0:c0 + k].clone().requires_grad_()
    try:  # torch's rule: none for the full U of a non-square A (refused on every rank alike)
        mt.linalg.svd(x, group=pg)[0].sum().backward()
    except NotImplementedError as e:
        assert "full_matrices" in str(e), str(e)
    else:
        raise AssertionError("a backward of the full SVD of a tall A ran")
    fc.check_svdvals(A, mt.linalg.svdvals(A[:, c0:c0 + k], group=pg))  # the group still works


def factors(rank, nranks, tmp, seed, pg):
    out = {}
    gen = torch.Generator().manual_seed(seed)  # the same A on every rank
    for dt in DTYPES:
        for m, n in SHAPES:
            A = fc.mat(gen, m, n, dt)
            out[f"{m}x{n}.{str(dt)[6:]}"] = _case(lambda: _one(pg, rank, nranks, A))
    out["batched"] = _case(lambda: _batched(pg, rank, nranks, gen))
    out["refusals"] = _case(lambda: _refusals(pg, rank, nranks, gen))
    out["grads"] = _case(lambda: factor_grad_checks.gradchecks(pg, rank, nranks, gen, fc))
    return out


def _case(fn):
    try:
        fn()
        return "ok"
    except Exception:
        return traceback.format_exc()[-2000:]


CASES = [f"{m}x{n}.{str(dt)[6:]}" for dt in DTYPES for m, n in SHAPES] + ["batched", "refusals", "grads"]
