"""Worker processes for the one-rank-per-process tests: each is one rank of
a gloo process group (torch.multiprocessing, forkserver), runs a scenario,
and writes what it saw to <tmp>/result.<rank>.json for the test to check.

Scenarios:
  solves   every op x dtype with this rank's column block, checked here
           (potrs with and without log det, potri, syevd, getrs, gels);
           the same through a DTensor; the derivatives of each op in the
           process group against those of one process holding every block
  wait     join a solve whose provider (testprov, TESTPROV_GATE) waits, for
           the parent to SIGKILL a rank; record the exception and its time
  missing  every rank but the last calls potrs; the last never does
  missing_first  the same, the last not even drawing the group's name
  factors  qr, svd, svdvals and polar with group= (factor_worker.py)
"""
import json
import os
import pathlib
import time
import traceback


def _setup(rank, nranks, tmp, env):
    os.environ.update(env)
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=rank,
                            world_size=nranks)
    return dist.group.WORLD


def _block(A, rank, nranks):
    import muster_torch as mt
    c0, k = mt.block_columns(A.shape[1], nranks, rank)
    return A[:, c0:c0 + k], slice(c0, c0 + k)


def _case(out, name, fn):
    try:
        fn()
        out[name] = "ok"
    except Exception:
        out[name] = traceback.format_exc()[-2000:]


def _solves(rank, nranks, tmp, seed, pg):
    import torch
    import muster_torch as mt
    import torch_util as tu
    out = {}
    gen = torch.Generator().manual_seed(seed)
    n = 3 * nranks + 2  # not a multiple of the ranks: the last block is short
    for dtype in tu.DTYPES:
        A, H = tu.hpd(n, dtype, gen), tu.herm(n, dtype, gen)
        B = tu.rhs(n, 3, dtype, gen)
        G, T = tu.general(n, dtype, gen), tu.tall(2 * n + 1, n, dtype, gen)
        C = tu.rhs(2 * n + 1, 2, dtype, gen)
        a, c = _block(A, rank, nranks)
        h, _ = _block(H, rank, nranks)
        g, _ = _block(G, rank, nranks)
        t, _ = _block(T, rank, nranks)
        ct = torch.complex128 if dtype.is_complex else torch.float64
        eye = torch.eye(n, dtype=ct)

        def potrs():
            tu.check_potrs(A, B, mt.potrs(a, B, group=pg))
            tu.check_potrs(A, B[:, 0], mt.potrs(a, B[:, 0], group=pg))

        def logdet():
            x, ld = mt.potrs(a, B, group=pg, return_logdet=True)
            tu.check_potrs(A, B, x)
            tu.check_logdet(A, ld)

        def getrs():
            tu.check_getrs(G, B, mt.getrs(g, B, group=pg))
            tu.check_getrs(G, B[:, 1], mt.getrs(g, B[:, 1], group=pg))

        def gels():
            tu.check_gels(T, C, mt.gels(t, C, group=pg))
            tu.check_gels(T, C[:, 0], mt.gels(t, C[:, 0], group=pg))

        def potri():
            y = mt.potri(a, group=pg)
            r = tu.rel(A.to(ct) @ y.to(ct) - eye[:, c], eye[:, c])
            assert y.shape == a.shape and r < tu.tol(dtype, n, 20), r

        def syevd():
            w, v = mt.syevd(h, group=pg)
            tu.check_syevd(H, w, None)
            r = tu.rel(H.to(ct) @ v.to(ct) - v.to(ct) * w.to(ct)[c][None, :], H.to(ct))
            assert v.shape == h.shape and r < tu.tol(dtype, n), r
            w_only = mt.syevd(h, group=pg, return_eigenvectors=False)
            assert float((w_only - w).abs().max()) < tu.tol(dtype, n) * float(w.abs().max())

        for name, fn in (("potrs", potrs), ("potri", potri), ("syevd", syevd),
                         ("logdet", logdet), ("getrs", getrs), ("gels", gels)):
            _case(out, f"{name}.{str(dtype)[6:]}", fn)
    _case(out, "dtensor", lambda: _dtensor(rank, nranks, gen))
    _case(out, "grad", lambda: _grads(rank, nranks, gen, pg))
    _case(out, "two_groups", lambda: _two_groups(rank, nranks, gen, pg))
    _case(out, "vmap", lambda: _vmap(rank, nranks, gen, pg))
    return out


def _vmap(rank, nranks, gen, pg):
    """torch.func.vmap over a process group: B batched with A shared (one
    collective call), and A's blocks batched (one collective call per
    element, every rank in the same order)."""
    import torch
    import muster_torch as mt
    import torch_util as tu
    n, f64 = 2 * nranks + 3, torch.float64
    H = torch.stack([tu.hpd(n, f64, gen) for _ in range(3)])
    B = torch.stack([tu.rhs(n, 2, f64, gen) for _ in range(3)])
    c0, k = mt.block_columns(n, nranks, rank)
    x = torch.func.vmap(lambda b: mt.potrs(H[0][:, c0:c0 + k], b, group=pg))(B)
    for i in range(3):
        tu.check_potrs(H[0], B[i], x[i])
    x = torch.func.vmap(lambda a, b: mt.potrs(a, b, group=pg))(H[:, :, c0:c0 + k], B)
    for i in range(3):
        tu.check_potrs(H[i], B[i], x[i])


def _two_groups(rank, nranks, gen, pg):
    """Two process groups over the same ranks get two muster groups: solves
    of different orders on both at once, one thread each, never meet (a
    shared group would fail with MUSTER_EMISMATCH or mix the blocks)."""
    import threading
    import torch
    import torch.distributed as dist
    import muster_torch as mt
    import torch_util as tu
    pg2 = dist.new_group(list(range(nranks)))
    assert mt.group_name(pg) != mt.group_name(pg2)
    cases = []
    for g, n in ((pg, 2 * nranks + 1), (pg2, 3 * nranks + 2)):
        A, B = tu.hpd(n, torch.float64, gen), tu.rhs(n, 2, torch.float64, gen)
        cases.append((g, A, B, _block(A, rank, nranks)[0]))
    got, errors = {}, []

    def solve(i, g, A, B, a):
        try:
            for _ in range(5):
                got[i] = mt.potrs(a, B, group=g)
        except Exception as e:  # reported below, on the main thread
            errors.append(e)

    threads = [threading.Thread(target=solve, args=(i, *c)) for i, c in enumerate(cases)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    for i, (_, A, B, _) in enumerate(cases):
        tu.check_potrs(A, B, got[i])


def _dtensor(rank, nranks, gen):
    import torch
    import muster_torch as mt
    import torch_util as tu
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
    mesh = init_device_mesh("cpu", (nranks,))
    n = 2 * nranks + 1
    A = tu.hpd(n, torch.float64, gen)
    B = tu.rhs(n, 2, torch.float64, gen)
    Ad = distribute_tensor(A, mesh, [Shard(1)])
    x = mt.potrs(Ad, B)
    assert isinstance(x, DTensor) and x.placements == (Replicate(),)
    tu.check_potrs(A, B, x.full_tensor())
    inv = mt.potri(Ad)
    assert isinstance(inv, DTensor) and inv.placements == (Shard(1),)
    tu.check_potri(A, inv.full_tensor())
    w, v = mt.syevd(Ad)
    tu.check_syevd(A, w.full_tensor(), v.full_tensor())
    x, ld = mt.potrs(Ad, B, return_logdet=True)
    assert isinstance(ld, DTensor) and ld.placements == (Replicate(),)
    tu.check_logdet(A, ld.full_tensor())
    G = tu.general(n, torch.float64, gen)
    x = mt.getrs(distribute_tensor(G, mesh, [Shard(1)]), B)
    assert isinstance(x, DTensor) and x.placements == (Replicate(),)
    tu.check_getrs(G, B, x.full_tensor())
    T, C = tu.tall(2 * n + 3, n, torch.float64, gen), tu.rhs(2 * n + 3, 2, torch.float64, gen)
    x = mt.gels(distribute_tensor(T, mesh, [Shard(1)]), C)
    assert isinstance(x, DTensor) and x.shape == (n, 2)
    tu.check_gels(T, C, x.full_tensor())


def _grads(rank, nranks, gen, pg):
    """Each op's derivative over the process group equals that of one process
    holding every block (muster_solve_all).  Replicated results (X, w): every
    rank computes the same loss of them, the contract of a replicated value;
    sharded results (potri's blocks): the loss is the sum of each rank's
    loss of its own block, as for a sharded DTensor."""
    import torch
    import muster_torch as mt
    import torch_util as tu
    n = 2 * nranks + 1
    A, B = tu.hpd(n, torch.float64, gen), tu.rhs(n, 2, torch.float64, gen)
    W = tu.rhs(n, n, torch.float64, gen)  # weights of the losses
    G, T = tu.general(n, torch.float64, gen), tu.tall(2 * n + 1, n, torch.float64, gen)
    C = tu.rhs(2 * n + 1, 2, torch.float64, gen)
    cols = _block(A, rank, nranks)[1]
    losses = {
        "potrs": (lambda a: (mt.potrs(a, B) * W[:, :2]).sum(),
                  lambda a: (mt.potrs(a, B, group=pg) * W[:, :2]).sum()),
        "potri": (lambda a: (mt.cat_columns(mt.potri(a)) * W).sum(),
                  lambda a: (mt.potri(a, group=pg) * W[:, cols]).sum()),
        "syevd": (lambda a: (mt.syevd(a, return_eigenvectors=False) * W[0]).sum(),
                  lambda a: (mt.syevd(a, group=pg, return_eigenvectors=False) * W[0]).sum()),
        "syevd_vectors": (lambda a: (mt.cat_columns(mt.syevd(a)[1]).abs() * W).sum(),
                          lambda a: (mt.syevd(a, group=pg)[1].abs() * W[:, cols]).sum()),
    }
    general = {
        "getrs": (G, lambda a: (mt.getrs(a, B) * W[:, :2]).sum(),
                  lambda a: (mt.getrs(a, B, group=pg) * W[:, :2]).sum()),
        "gels": (T, lambda a: (mt.gels(a, C) * W[:, :2]).sum(),
                 lambda a: (mt.gels(a, C, group=pg) * W[:, :2]).sum()),
        "logdet": (A, lambda a: mt.potrs(a, B, return_logdet=True)[1] * 3,
                   lambda a: mt.potrs(a, B, group=pg, return_logdet=True)[1] * 3),
        "potrs_logdet": (A, lambda a: _weighted(mt.potrs(a, B, return_logdet=True), W),
                         lambda a: _weighted(mt.potrs(a, B, group=pg, return_logdet=True), W)),
    }
    cases = [(A, name, *fns) for name, fns in losses.items()] + \
            [(M, name, *fns) for name, (M, *fns) in general.items()]
    for M, name, whole, ranked in cases:
        ref = [b.clone().requires_grad_() for b in mt.split_columns(M, nranks)]
        whole(ref).backward()
        mine = ref[rank].detach().clone().requires_grad_()
        ranked(mine).backward()
        assert mine.grad.shape == ref[rank].grad.shape, name
        if mine.grad.numel():  # the last ranks may hold no column
            err = float((mine.grad - ref[rank].grad).abs().max())
            assert err < 1e-9 * (float(ref[rank].grad.abs().max()) + 1), (name, err)


def _weighted(x_ld, W):
    x, ld = x_ld
    return (x * W[:, :2]).sum() + ld * W[0, 0]


def _wait(rank, nranks, tmp, seed, pg):
    import torch
    import muster_torch as mt
    a = torch.eye(8, dtype=torch.float64)[:, _block(torch.eye(8), rank, nranks)[1]] * 2
    pathlib.Path(tmp, f"entering.{rank}").touch()
    try:
        mt.potrs(a, torch.ones(8, 1, dtype=torch.float64), group=pg, provider="testprov")
        return {"raised": None}
    except Exception as e:
        return {"raised": type(e).__name__, "bases": [c.__name__ for c in type(e).__mro__],
                "msg": str(e), "t": time.monotonic()}


def _missing(rank, nranks, tmp, seed, pg, first=False):
    """Every rank but the last calls potrs; the last never does.  first: not
    even the group's first muster call (the group-name broadcast)."""
    import torch
    import muster_torch as mt
    if not first:
        mt.group_name(pg)  # every rank, so that only the solve is missing
    if rank == nranks - 1:
        time.sleep(6)
        return {"raised": None}
    a = torch.eye(8, dtype=torch.float64)[:, _block(torch.eye(8), rank, nranks)[1]] * 2
    t0 = time.monotonic()
    try:
        mt.potrs(a, torch.ones(8, 1, dtype=torch.float64), group=pg, timeout=1.5)
        return {"raised": None}
    except Exception as e:
        return {"raised": type(e).__name__, "bases": [c.__name__ for c in type(e).__mro__],
                "msg": str(e), "elapsed": time.monotonic() - t0}


def _missing_first(rank, nranks, tmp, seed, pg):
    return _missing(rank, nranks, tmp, seed, pg, first=True)


def _factors(rank, nranks, tmp, seed, pg):
    import factor_worker
    return factor_worker.factors(rank, nranks, tmp, seed, pg)


SCENARIOS = {"solves": _solves, "wait": _wait, "missing": _missing,
             "missing_first": _missing_first, "factors": _factors}


def main(rank, nranks, tmp, scenario, seed, env):
    """Entry point of one worker process (torch.multiprocessing target)."""
    try:
        pg = _setup(rank, nranks, tmp, env)
        import torch
        import muster_torch as mt
        # the first call of a custom op imports torch._dynamo (seconds): pay it
        # before anything is timed, in this process alone (no group)
        mt.potrs([torch.eye(2, dtype=torch.float64)], torch.ones(2, dtype=torch.float64),
                 provider="lapack")
        if not scenario.startswith("missing"):
            mt.group_name(pg)
        res = SCENARIOS[scenario](rank, nranks, tmp, seed, pg)
    except Exception:
        res = {"setup": traceback.format_exc()[-3000:]}
    pathlib.Path(tmp, f"result.{rank}.json").write_text(json.dumps(res))
    os._exit(0)  # no teardown: a peer may be dead (gloo would wait for it)
