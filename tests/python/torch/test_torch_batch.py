"""Batches: muster_torch.linalg on 3-D and 4-D inputs (batch dimensions
broadcast as torch.linalg's, one muster call per matrix) against
torch.linalg, an empty batch, and torch.func.vmap of every op against a
loop of single calls (one call per element when A is batched, ONE call when
only B is: counted), with vmap over a dimension other than 0, gradients
through vmap, and torch.compile of linalg and vmap."""
import pytest
import torch

import muster_torch as mt
import muster_torch._solve as solve_module
import torch_util as tu

F64 = torch.float64


def wide(t):
    return t.to(torch.complex128 if t.is_complex() else F64)


def stack(make, count):
    return torch.stack([make() for _ in range(count)])


def assert_close(got, want, bound, what):
    g, w = wide(got), wide(want)
    err = float((g - w).abs().max()) / max(1.0, float(w.abs().max()))
    assert err <= bound, f"{what}: error {err:.3g} > {bound:.3g}"


def max_cond(a):
    return float(torch.linalg.cond(wide(a)).max())


@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_batched_linalg_matches_torch(dtype, gen):
    n, L, TL = 6, mt.linalg, torch.linalg
    G = stack(lambda: tu.general(n, dtype, gen), 3).reshape(3, 1, n, n)   # (3, 1, n, n)
    H = stack(lambda: tu.hpd(n, dtype, gen), 2)                             # (2, n, n)
    B = stack(lambda: tu.rhs(n, 2, dtype, gen), 2)                          # (2, n, 2)
    c, bound = max_cond(G), lambda k: tu.tol(dtype, n, k)                   # noqa: E731
    X = L.solve(G, B)
    assert X.shape == (3, 2, n, 2)
    assert_close(X, TL.solve(wide(G), wide(B)), bound(c), "solve")
    x = L.solve(G[:2, 0], B[..., 0])  # B (2, n): a batch of vectors (torch's rule)
    assert x.shape == (2, n)
    assert_close(x, TL.solve(wide(G[:2, 0]), wide(B[..., 0])), bound(c), "solve vectors")
    assert_close(L.solve(G, B.mT, left=False), TL.solve(wide(G), wide(B.mT), left=False),
                 bound(c), "left=False")
    ch = max_cond(H)
    assert_close(L.solve(H, B, assume="pos", devices=2), TL.solve(wide(H), wide(B)), bound(ch),
                 "solve pos")
    assert_close(L.inv(G), TL.inv(wide(G)), bound(c), "inv")
    assert_close(L.inv(H, assume="pos"), TL.inv(wide(H)), bound(ch), "inv pos")
    w, V = L.eigh(H)
    assert w.shape == (2, n) and V.shape == (2, n, n)
    for i in range(2):
        tu.check_syevd(H[i], w[i], V[i])
    assert_close(L.eigvalsh(H.mH, UPLO="U"), TL.eigvalsh(wide(H)), bound(1), "eigvalsh")
    sd = L.slogdet(H, assume="pos")
    assert sd.sign.shape == sd.logabsdet.shape == (2,)
    assert_close(sd.logabsdet, TL.slogdet(wide(H)).logabsdet, bound(ch), "slogdet")
    T = stack(lambda: tu.tall(11, n, dtype, gen), 2)
    C = stack(lambda: tu.rhs(11, 3, dtype, gen), 2)
    ls, ref = L.lstsq(T, C), TL.lstsq(wide(T), wide(C), driver="gels")
    ct = max_cond(T)
    assert ls.solution.shape == (2, n, 3) and ls.residuals.shape == (2, 3)
    assert ls.rank.tolist() == [n, n]
    assert_close(ls.solution, ref.solution, tu.tol(dtype, 11, ct + ct * ct), "lstsq")
    assert_close(ls.residuals, ref.residuals, tu.tol(dtype, 11, ct + ct * ct), "residuals")


def test_one_call_per_matrix(gen, monkeypatch):
    calls = []
    real = solve_module.solve
    monkeypatch.setattr(solve_module, "solve", lambda req: calls.append(1) or real(req))
    A = stack(lambda: tu.general(5, F64, gen), 4).reshape(2, 2, 5, 5)
    mt.linalg.solve(A, tu.rhs(5, 1, F64, gen))
    assert len(calls) == 4


def test_empty_batch():
    A = torch.eye(4, dtype=F64).expand(0, 3, 4, 4)
    assert mt.linalg.solve(A, torch.ones(4, dtype=F64)).shape == (0, 3, 4)
    r = mt.linalg.eigh(A.to(torch.complex64))
    assert r.eigenvalues.shape == (0, 3, 4) and r.eigenvalues.dtype == torch.float32
    assert r.eigenvectors.shape == (0, 3, 4, 4) and r.eigenvectors.dtype == torch.complex64


def test_batched_gradients_match_torch(gen):
    n = 5
    G = stack(lambda: tu.general(n, F64, gen), 3).requires_grad_()
    B = tu.rhs(n, 2, F64, gen).requires_grad_()  # broadcast over the batch
    (mt.linalg.solve(G, B).sin() ** 2).sum().backward()
    G2, B2 = G.detach().clone().requires_grad_(), B.detach().clone().requires_grad_()
    (torch.linalg.solve(G2, B2).sin() ** 2).sum().backward()
    assert torch.allclose(G.grad, G2.grad, atol=1e-12) and torch.allclose(B.grad, B2.grad)


# ------------------------------------------------------------------------ vmap
def count_calls(monkeypatch):
    calls = []
    for name in ("solve", "potri", "syevd"):
        real = getattr(solve_module, name)
        monkeypatch.setattr(solve_module, name,
                            lambda req, real=real: calls.append(req.routine) or real(req))
    return calls


def loop(f, *xs, in_dims):
    """f over the batch by hand: the reference for vmap."""
    size = next(x.shape[d] for x, d in zip(xs, in_dims) if d is not None)
    outs = [f(*[x if d is None else x.select(d, i) for x, d in zip(xs, in_dims)])
            for i in range(size)]
    if isinstance(outs[0], torch.Tensor):
        return torch.stack(outs)
    return tuple(torch.stack(p) for p in zip(*outs))


def cases(dtype, gen):
    """(name, f, inputs, in_dims, calls vmap makes for a batch of 3)."""
    n, batch = 6, 3
    H = stack(lambda: tu.hpd(n, dtype, gen), batch)
    G = stack(lambda: tu.general(n, dtype, gen), batch)
    T = stack(lambda: tu.tall(10, n, dtype, gen), batch)
    B = stack(lambda: tu.rhs(n, 2, dtype, gen), batch)
    C = stack(lambda: tu.rhs(10, 2, dtype, gen), batch)
    two = lambda a: mt.split_columns(a, 2)  # noqa: E731  (vmap sees a list of 2 shards)
    return [
        ("potrs", lambda a, b: mt.potrs(two(a), b), (H, B), (0, 0), batch),
        ("potrs A shared", lambda a, b: mt.potrs(two(a), b), (H[0], B), (None, 0), 1),
        ("potrs vectors", lambda a, b: mt.potrs(a, b), (H[0], B[..., 0]), (None, 0), 1),
        ("potrs B dim 2", lambda a, b: mt.potrs(a, b), (H[0], B.permute(1, 2, 0)), (None, 2), 1),
        ("potrs_logdet", lambda a, b: mt.potrs(two(a), b, return_logdet=True), (H, B), (0, 0),
         batch),
        ("getrs A dim 1", lambda a, b: mt.getrs(two(a), b), (G.transpose(0, 1), B), (1, 0), batch),
        ("getrs A shared", lambda a, b: mt.getrs(a, b), (G[0], B), (None, 0), 1),
        ("gels", lambda a, b: mt.gels(two(a), b), (T, C), (0, 0), batch),
        ("gels A shared", lambda a, b: mt.gels(a, b), (T[0], C), (None, 0), 1),
        ("potri", lambda a: mt.cat_columns(mt.potri(two(a))), (H,), (0,), batch),
        ("syevd", lambda a: (lambda w, v: (w, v.abs()))(*mt.syevd(a)), (H,), (0,), batch),
        ("syevd values", lambda a: mt.syevd(two(a), return_eigenvectors=False), (H,), (0,), batch),
        ("linalg.solve", lambda a, b: mt.linalg.solve(a, b), (G, B), (0, 0), batch),
        ("linalg.inv", lambda a: mt.linalg.inv(a), (G,), (0,), batch),
    ]


@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_vmap_matches_a_loop(dtype, gen, monkeypatch):
    calls = count_calls(monkeypatch)
    for name, f, xs, in_dims, ncalls in cases(dtype, gen):
        want = loop(f, *xs, in_dims=in_dims)
        del calls[:]
        got = torch.func.vmap(f, in_dims=in_dims)(*xs)
        assert len(calls) == ncalls, (name, calls)
        got, want = ((got,), (want,)) if isinstance(want, torch.Tensor) else (got, want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (name, g.shape, w.shape)
            assert_close(g, w, tu.tol(dtype, 10, 10), name)


def test_vmap_logdet_of_a_shared_a_is_unbatched(gen):
    H, B = tu.hpd(5, F64, gen), stack(lambda: tu.rhs(5, 1, F64, gen), 4)
    x, ld = torch.func.vmap(lambda b: mt.potrs(H, b, return_logdet=True))(B)
    assert x.shape == (4, 5, 1) and ld.shape == (4,)
    assert torch.allclose(ld, torch.logdet(H).expand(4))


def test_gradients_through_vmap(gen):
    """torch.autograd through vmap's results equals it through the loop
    (torch.func.grad of these ops fails in torch itself: docs/torch.md)."""
    H = stack(lambda: tu.hpd(5, F64, gen), 3)
    B = stack(lambda: tu.rhs(5, 2, F64, gen), 3)
    f = lambda a, b: mt.potrs(mt.split_columns(a, 2), b)  # noqa: E731
    for in_dims in ((0, 0), (None, 0)):
        xs = [H[0] if in_dims[0] is None else H, B]
        a1, b1 = (x.clone().requires_grad_() for x in xs)
        (torch.func.vmap(f, in_dims=in_dims)(a1, b1).sin() ** 2).sum().backward()
        a2, b2 = (x.clone().requires_grad_() for x in xs)
        (loop(f, a2, b2, in_dims=in_dims).sin() ** 2).sum().backward()
        assert torch.allclose(a1.grad, a2.grad, atol=1e-12)
        assert torch.allclose(b1.grad, b2.grad, atol=1e-12)


def test_compile(gen):
    """torch.compile (aot_eager, fullgraph) of linalg on a batch, its result
    types, and vmap inside the compiled function: traced through the ops'
    fake implementations and vmap rules."""
    n = 5
    G = stack(lambda: tu.general(n, F64, gen), 2)
    H = stack(lambda: tu.hpd(n, F64, gen), 2)
    B = stack(lambda: tu.rhs(n, 2, F64, gen), 2)

    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(g, h, b):
        w, v = mt.linalg.eigh(h)
        x = torch.func.vmap(lambda bb: mt.potrs(h[0], bb))(b)
        return mt.linalg.solve(g, b), w, v, x

    X, w, V, x = f(G, H, B)
    assert torch.allclose(X, torch.linalg.solve(G, B))
    assert torch.allclose(w, torch.linalg.eigvalsh(H))
    assert torch.allclose(H @ V, V * w[:, None, :])
    assert torch.allclose(H[0] @ x, B)
