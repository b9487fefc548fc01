"""muster_torch on CUDA GPUs, without pytest (the GPU machine has none):
run by tests/gpu/run-torch-tests.sh.  Prints "PASS name" or "FAIL name: why"
per case and "gpu_check MODE: N passed, M failed"; exits 1 if any failed.

  python gpu_check.py local     one process holding a block per GPU (1 and,
                                when there are 2, 2 GPUs): every op x dtype,
                                residuals, results on the blocks' devices,
                                inputs unchanged; the caller's stream is
                                honoured; muster_torch.linalg on a
                                batch and vmap; gradcheck; torch.compile; the
                                docs' py-gpu examples
  torchrun --nproc-per-node R gpu_check.py dist
                                one process per GPU (gloo for CPU tensors,
                                NCCL for CUDA ones): every op x dtype with
                                each rank's block on its own GPU, and
                                potrs's gradient against torch.linalg's
"""
import os
import pathlib
import subprocess
import sys
import time
import traceback

import torch

import muster_torch as mt
import torch_util as tu

HERE = pathlib.Path(__file__).resolve().parent
N = int(os.environ.get("GPU_CHECK_N", "600"))
results = {"pass": 0, "fail": 0}


def case(name, fn):
    t0 = time.monotonic()
    try:
        fn()
        results["pass"] += 1
        print(f"PASS {name} ({time.monotonic() - t0:.2f} s)", flush=True)
    except Exception:
        results["fail"] += 1
        print(f"FAIL {name}: {traceback.format_exc()[-2500:]}", flush=True)


def cpu(t):
    return t.detach().to("cpu")


def devices(k):
    return [f"cuda:{d}" for d in range(k)]


# ------------------------------------------------------------------- local
def local_solves(ngpu, dtype, gen):
    n = N + ngpu + 1  # not a multiple of the GPUs: the last block is short
    A, H = tu.hpd(n, dtype, gen), tu.herm(n, dtype, gen)
    B = tu.rhs(n, 3, dtype, gen)
    blocks = mt.split_columns(A, devices(ngpu))
    before = [b.clone() for b in blocks]
    X = mt.potrs(blocks, B.to("cuda:0"))
    assert X.device == torch.device("cuda:0")
    tu.check_potrs(A, B, cpu(X))
    inv = mt.potri(blocks)
    assert [t.device for t in inv] == [t.device for t in blocks]
    tu.check_potri(A, cpu(mt.cat_columns(inv)))
    assert all(torch.equal(b, c) for b, c in zip(blocks, before)), "input changed"
    w, V = mt.syevd(mt.split_columns(H, devices(ngpu)))
    assert [t.device for t in V] == [torch.device(d) for d in devices(ngpu)]
    tu.check_syevd(H, cpu(w), cpu(mt.cat_columns(V)))


def stream_is_honoured(gen):
    """A's block is written on a side stream after a ~0.2 s GPU sleep, and
    potrs is called on that stream without any synchronize: a solve that
    read A before the stream's earlier work would see unwritten memory."""
    n = N
    A, B = tu.hpd(n, torch.float64, gen), tu.rhs(n, 2, torch.float64, gen)
    src, b = A.to("cuda:0"), B.to("cuda:0")
    torch.cuda.synchronize()
    s = torch.cuda.Stream("cuda:0")
    with torch.cuda.stream(s):
        torch.cuda._sleep(int(2e8))
        a = src.clone()  # queued on s, after the sleep
        X = mt.potrs([a], b)
        w = mt.syevd([a], return_eigenvectors=False)
    s.synchronize()
    tu.check_potrs(A, B, cpu(X))
    tu.check_syevd(A, cpu(w), None)


def gradcheck_gpu(ngpu, gen):
    n = 6
    A = tu.hpd(n, torch.float64, gen).to("cuda:0").requires_grad_()
    B = tu.rhs(n, 2, torch.float64, gen).to("cuda:0").requires_grad_()

    def f(a, b):
        return mt.potrs(mt.split_columns((a + a.mT) / 2, devices(ngpu)), b)
    assert torch.autograd.gradcheck(f, (A, B))


def compile_gpu(ngpu, gen):
    n = N
    A, B = tu.hpd(n, torch.float64, gen), tu.rhs(n, 2, torch.float64, gen)
    blocks = mt.split_columns(A, devices(ngpu))

    @torch.compile(fullgraph=True)
    def f(bl, b):
        return mt.potrs(bl, b * 2) + 1

    X = f(blocks, B.to("cuda:0"))
    tu.check_potrs(A, B * 2, cpu(X) - 1)


def local_linalg(ngpu, dtype, gen):
    """muster_torch.linalg on a batch of 2 matrices split over the GPUs,
    against torch.linalg in double on the CPU; vmap of potrs with A shared."""
    n, L = N // 2 + ngpu, mt.linalg
    G = torch.stack([tu.general(n, dtype, gen) for _ in range(2)])
    H = torch.stack([tu.hpd(n, dtype, gen) for _ in range(2)])
    B = torch.stack([tu.rhs(n, 2, dtype, gen) for _ in range(2)])
    wide = lambda t: t.to(torch.complex128 if t.is_complex() else torch.float64)  # noqa: E731
    g, h, b, dev = G.to("cuda:0"), H.to("cuda:0"), B.to("cuda:0"), devices(ngpu)

    def close(got, want, what, cond=10.0):
        assert got.device == torch.device("cuda:0"), (what, got.device)
        err = float((wide(cpu(got)) - wide(want)).abs().max()) / max(1.0, float(want.abs().max()))
        assert err <= tu.tol(dtype, n, cond), (what, err, tu.tol(dtype, n, cond))

    cg = float(torch.linalg.cond(wide(G)).max())
    ch = float(torch.linalg.cond(wide(H)).max())
    close(L.solve(g, b, devices=dev), torch.linalg.solve(wide(G), wide(B)), "solve", cg)
    close(L.solve(h, b, assume="pos", devices=dev), torch.linalg.solve(wide(H), wide(B)),
          "solve pos", ch)
    close(L.inv(g, devices=dev), torch.linalg.inv(wide(G)), "inv", cg)
    close(L.inv(h, assume="pos", devices=dev), torch.linalg.inv(wide(H)), "inv pos", ch)
    w, V = L.eigh(h, devices=dev)
    close(w, torch.linalg.eigvalsh(wide(H)), "eigh", float(H.abs().sum(-2).max()))
    for i in range(2):
        tu.check_syevd(H[i], cpu(w[i]), cpu(V[i]))
    close(L.slogdet(h, assume="pos", devices=dev).logabsdet,
          torch.linalg.slogdet(wide(H)).logabsdet, "slogdet", ch)
    T = torch.stack([tu.tall(2 * n, n, dtype, gen) for _ in range(2)])
    C = torch.stack([tu.rhs(2 * n, 2, dtype, gen) for _ in range(2)])
    ct = float(torch.linalg.cond(wide(T)).max())
    close(L.lstsq(T.to("cuda:0"), C.to("cuda:0"), devices=dev).solution,
          torch.linalg.lstsq(wide(T), wide(C)).solution, "lstsq", ct + ct * ct)
    x = torch.func.vmap(lambda bb: mt.potrs(mt.split_columns(h[0], dev), bb))(b)
    close(x, torch.linalg.solve(wide(H[0]), wide(B)), "vmap potrs", ch)


def doc_examples():
    sys.path.insert(0, str(HERE))
    import test_docs
    code = test_docs.blocks("py-gpu")
    assert code, "docs/torch.md has no py-gpu block"
    for i, c in enumerate(code):
        path = pathlib.Path(os.environ.get("OUT", "/tmp"), f"torch_doc_gpu_{i}.py")
        path.write_text(c)
        out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        lines = [l.strip() for l in out.stdout.splitlines()]
        for want in test_docs.expected_prints(c):
            assert want in lines, (i, want, lines)


def local():
    gen = torch.Generator().manual_seed(int.from_bytes(os.urandom(4), "little"))
    ngpus = [1, 2] if torch.cuda.device_count() >= 2 else [1]
    for k in ngpus:
        for dtype in tu.DTYPES:
            case(f"local {k}gpu {str(dtype)[6:]}", lambda: local_solves(k, dtype, gen))
        for dtype in tu.DTYPES:
            case(f"local {k}gpu linalg {str(dtype)[6:]}", lambda: local_linalg(k, dtype, gen))
        case(f"local {k}gpu gradcheck", lambda: gradcheck_gpu(k, gen))
        case(f"local {k}gpu compile", lambda: compile_gpu(k, gen))
    case("caller's stream", lambda: stream_is_honoured(gen))
    case("docs py-gpu examples", doc_examples)


# -------------------------------------------------------------------- dist
def dist_solves(pg, rank, nranks, dtype, gen):
    n = N + nranks + 1
    dev = f"cuda:{rank}"
    A, H = tu.hpd(n, dtype, gen), tu.herm(n, dtype, gen)
    B = tu.rhs(n, 3, dtype, gen)
    c0, k = mt.block_columns(n, nranks, rank)
    c = slice(c0, c0 + k)
    ct = torch.complex128 if dtype.is_complex else torch.float64
    X = mt.potrs(A[:, c].to(dev), B.to(dev), group=pg)
    assert X.device == torch.device(dev)
    tu.check_potrs(A, B, cpu(X))
    y = cpu(mt.potri(A[:, c].to(dev), group=pg))
    eye = torch.eye(n, dtype=ct)[:, c]
    r = tu.rel(A.to(ct) @ y.to(ct) - eye, eye)
    assert r < tu.tol(dtype, n, 20), f"potri residual {r:.3g}"
    w, v = mt.syevd(H[:, c].to(dev), group=pg)
    w, v = cpu(w), cpu(v)
    tu.check_syevd(H, w, None)
    r = tu.rel(H.to(ct) @ v.to(ct) - v.to(ct) * w.to(ct)[c][None, :], H.to(ct))
    assert r < tu.tol(dtype, n), f"syevd residual {r:.3g}"


def dist_grad(pg, rank, nranks, gen):
    n = 2 * nranks + 3
    dev = f"cuda:{rank}"
    A, B = tu.hpd(n, torch.float64, gen), tu.rhs(n, 2, torch.float64, gen)
    c0, k = mt.block_columns(n, nranks, rank)
    mine = A[:, c0:c0 + k].to(dev).requires_grad_()
    (mt.potrs(mine, B.to(dev), group=pg) ** 2).sum().backward()
    a = A.clone().requires_grad_()
    (torch.cholesky_solve(B, torch.linalg.cholesky(a)) ** 2).sum().backward()
    ref = ((a.grad + a.grad.mT) / 2)[:, c0:c0 + k]  # the Hermitian gradient, this rank's columns
    assert torch.allclose(cpu(mine.grad), ref, atol=1e-10), float((cpu(mine.grad) - ref).abs().max())


def dist():
    import torch.distributed as td
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    td.init_process_group("cpu:gloo,cuda:nccl")
    nranks, pg = td.get_world_size(), td.group.WORLD
    seed = [int.from_bytes(os.urandom(4), "little")]
    td.broadcast_object_list(seed, src=0)  # the same matrices on every rank
    gen = torch.Generator().manual_seed(seed[0])
    for dtype in tu.DTYPES:
        case(f"dist rank {rank}/{nranks} {str(dtype)[6:]}",
             lambda: dist_solves(pg, rank, nranks, dtype, gen))
    case(f"dist rank {rank}/{nranks} potrs gradient", lambda: dist_grad(pg, rank, nranks, gen))
    td.destroy_process_group()


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "local"
    {"local": local, "dist": dist}[mode]()
    print(f"gpu_check {mode}: {results['pass']} passed, {results['fail']} failed", flush=True)
    sys.exit(1 if results["fail"] else 0)
