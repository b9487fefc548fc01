"""getrs (general A), gels (least squares, tall A) and potrs's log det in one
process holding every column block: each x dtype on 1, 2 and 4 CPU ranks
with residuals on fresh random inputs; singular, rank-deficient and NaN
inputs; shapes and dtypes; gradcheck (double) against the derivative
rules; opcheck of each op; torch.compile of a function calling them.
Their one-rank-per-process runs are in torch_worker.py ("solves")."""
import pytest
import torch

import muster_torch as mt
import torch_util as tu

RANKS = (1, 2, 4)
F64 = torch.float64


@pytest.mark.parametrize("nranks", RANKS)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_getrs(dtype, nranks, gen):
    n = 7 * nranks + 3
    A, B = tu.general(n, dtype, gen), tu.rhs(n, 4, dtype, gen)
    blocks = mt.split_columns(A, nranks)
    before = [b.clone() for b in blocks]
    X = mt.getrs(blocks, B)
    tu.check_getrs(A, B, X)
    assert X.stride() == (1, n)
    tu.check_getrs(A, B[:, 2], mt.lu_solve(blocks, B[:, 2]))
    assert all(torch.equal(b, c) for b, c in zip(blocks, before))


@pytest.mark.parametrize("nranks", RANKS)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_gels(dtype, nranks, gen):
    n = 5 * nranks + 2
    m = 2 * n + 3
    A, B = tu.tall(m, n, dtype, gen), tu.rhs(m, 3, dtype, gen)
    blocks = mt.split_columns(A, nranks)
    assert all(b.shape[0] == m for b in blocks)
    X = mt.gels(blocks, B)
    tu.check_gels(A, B, X)
    assert X.shape == (n, 3) and X.stride() == (1, n)
    tu.check_gels(A, B[:, 0], mt.least_squares(blocks, B[:, 0]))
    # square A: least squares is the solve
    S = tu.general(n, dtype, gen)
    tu.check_getrs(S, B[:n], mt.gels(mt.split_columns(S, nranks), B[:n]))


@pytest.mark.parametrize("nranks", RANKS)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_potrs_logdet(dtype, nranks, gen):
    n = 6 * nranks + 1
    A, B = tu.hpd(n, dtype, gen, shift=0.5), tu.rhs(n, 2, dtype, gen)
    X, ld = mt.potrs(mt.split_columns(A, nranks), B, return_logdet=True)
    tu.check_potrs(A, B, X)
    tu.check_logdet(A, ld)


def test_singular_getrs_is_linalg_error():
    A = torch.eye(6, dtype=F64)
    A[:, 3] = A[:, 1]  # column 3 repeats column 1: U(4,4) = 0
    with pytest.raises(torch.linalg.LinAlgError, match="singular") as e:
        mt.getrs(mt.split_columns(A, 2), torch.ones(6, 1, dtype=F64))
    assert e.value.info == 4 and e.value.kind == "numerical"


@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_rank_deficient_gels_is_linalg_error(dtype, gen):
    A = tu.tall(12, 5, dtype, gen)
    A[:, 4] = 2 * A[:, 0] - A[:, 2]  # dependent columns
    with pytest.raises(torch.linalg.LinAlgError, match="rank deficient|singular") as e:
        mt.gels(mt.split_columns(A, 2), tu.rhs(12, 1, dtype, gen))
    assert e.value.info > 0 and e.value.kind == "numerical"


def test_nan_is_linalg_error(gen):
    A = tu.general(5, F64, gen)
    A[2, 3] = float("nan")
    with pytest.raises(torch.linalg.LinAlgError, match="NaN"):
        mt.getrs(mt.split_columns(A, 2), torch.ones(5, 1, dtype=F64))
    T = tu.tall(9, 4, F64, gen)
    T[8, 0] = float("inf")
    with pytest.raises(torch.linalg.LinAlgError):
        mt.gels(mt.split_columns(T, 2), torch.ones(9, 1, dtype=F64))


def test_shapes_and_dtypes():
    a = torch.eye(6, dtype=F64)
    with pytest.raises(ValueError, match=r"b must be \(6,\)"):
        mt.getrs([a], torch.ones(5, 1, dtype=F64))
    with pytest.raises(ValueError, match="wider than tall"):
        mt.gels(mt.split_columns(torch.ones(3, 5, dtype=F64), 2), torch.ones(3, dtype=F64))
    with pytest.raises(ValueError, match=r"b must be \(9,\)"):  # gels's b has A's m rows
        mt.gels(mt.split_columns(torch.ones(9, 4, dtype=F64), 2), torch.ones(4, dtype=F64))
    with pytest.raises(TypeError, match="b is torch.float32, A is torch.float64"):
        mt.gels([torch.ones(9, 4, dtype=F64)], torch.ones(9))
    with pytest.raises(TypeError, match="not supported"):
        mt.getrs([torch.eye(3, dtype=torch.float16)], torch.ones(3, dtype=torch.float16))
    with pytest.raises(ValueError, match="block layout"):  # widths 1 + 3: not ceil(4/2)
        mt.gels([torch.ones(9, 1, dtype=F64), torch.ones(9, 3, dtype=F64)],
                torch.ones(9, dtype=F64))


def test_meta_tensors_give_shapes_only():
    a = [torch.empty((10, 2), dtype=torch.complex64, device="meta")] * 2
    x = mt.gels(a, torch.empty((10, 3), dtype=torch.complex64, device="meta"))
    assert x.device.type == "meta" and x.shape == (4, 3) and x.stride() == (1, 4)
    sq = [torch.empty((4, 2), dtype=F64, device="meta")] * 2
    assert mt.getrs(sq, torch.empty((4,), dtype=F64, device="meta")).shape == (4,)
    x, ld = mt.potrs(sq, torch.empty((4, 1), dtype=F64, device="meta"), return_logdet=True)
    assert ld.shape == () and ld.dtype == F64 and x.shape == (4, 1)


def sym(a):
    return (a + a.mH) / 2


@pytest.mark.parametrize("nranks", (1, 2))
@pytest.mark.parametrize("dtype", (torch.float64, torch.complex128), ids=str)
def test_gradcheck(dtype, nranks, gen):
    n = 5
    A, B = tu.general(n, dtype, gen).requires_grad_(), tu.rhs(n, 2, dtype, gen).requires_grad_()
    split = lambda a: mt.split_columns(a, nranks)  # noqa: E731
    lu = tu.solve_conditioning(A.detach())
    assert tu.gradcheck_fd(lambda a, b: mt.getrs(split(a), b), (A, B), *lu)
    assert tu.gradcheck_fd(lambda a, b: mt.getrs(split(a), b[:, 0]), (A, B), *lu)
    T, C = tu.tall(11, n, dtype, gen).requires_grad_(), tu.rhs(11, 2, dtype, gen).requires_grad_()
    ls = tu.solve_conditioning(T.detach(), least_squares=True)
    assert tu.gradcheck_fd(lambda a, b: mt.gels(split(a), b), (T, C), *ls)
    assert tu.gradcheck_fd(lambda a, b: mt.gels(split(a), b[:, 1]), (T, C), *ls)
    H = tu.hpd(n, dtype, gen).requires_grad_()
    chol = tu.solve_conditioning(H.detach())
    assert tu.gradcheck_fd(lambda a, b: mt.potrs(split(sym(a)), b, return_logdet=True), (H, B), *chol)
    assert tu.gradcheck_fd(lambda a: mt.potrs(split(sym(a)), B.detach(), return_logdet=True)[1], (H,),
                           *chol)


def test_gradients_match_torch_linalg(gen):
    n, m = 6, 13
    A, B = tu.general(n, F64, gen), tu.rhs(n, 2, F64, gen)
    T, C = tu.tall(m, n, F64, gen), tu.rhs(m, 2, F64, gen)
    H = tu.hpd(n, F64, gen)
    cases = [
        (lambda a, b: torch.linalg.solve(a, b), lambda a, b: mt.getrs(mt.split_columns(a, 2), b),
         A, B),
        (lambda a, b: torch.linalg.lstsq(a, b).solution,
         lambda a, b: mt.gels(mt.split_columns(a, 2), b), T, C),
        (lambda a, b: torch.logdet(sym(a)) + torch.cholesky_solve(b, torch.linalg.cholesky(sym(a))),
         lambda a, b: sum(mt.potrs(mt.split_columns(sym(a), 2), b, return_logdet=True)), H, B),
    ]
    for ref, ours, a, b in cases:
        a1, b1 = a.clone().requires_grad_(), b.clone().requires_grad_()
        (ref(a1, b1).sin() ** 2).sum().backward()
        a2, b2 = a.clone().requires_grad_(), b.clone().requires_grad_()
        (ours(a2, b2).sin() ** 2).sum().backward()
        assert torch.allclose(a1.grad, a2.grad, atol=1e-10) and torch.allclose(b1.grad, b2.grad)


@pytest.mark.parametrize("nranks", (1, 2))
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_opcheck(dtype, nranks):
    sq = (torch.diag(torch.arange(1.0, 7.0)) + 0.1 * torch.ones(6, 6).triu()).to(dtype)
    tall = torch.cat([sq, torch.ones(3, 6, dtype=dtype)])
    rest = ("", 0, nranks, 0, "", 0.0)

    def grad(blocks):
        return [t.clone().requires_grad_() for t in blocks]

    b6, b9 = torch.ones(6, 2, dtype=dtype), torch.ones(9, 2, dtype=dtype)
    for op, args in [
        (torch.ops.muster.getrs.default, (mt.split_columns(sq, nranks), b6, *rest)),
        (torch.ops.muster.getrs.default, (grad(mt.split_columns(sq, nranks)),
                                          b6.clone().requires_grad_(), *rest)),
        (torch.ops.muster.gels.default, (grad(mt.split_columns(tall, nranks)),
                                         b9.clone().requires_grad_(), 6, *rest)),
        (torch.ops.muster.potrs_logdet.default, (grad(mt.split_columns(sq + sq.mH, nranks)),
                                                 b6.clone().requires_grad_(), *rest)),
    ]:
        torch.library.opcheck(op, args)


def test_compile(gen):
    """torch.compile (inductor, fullgraph) of one function calling the three:
    traced through the fake implementations, forward and backward compiled."""
    n, m = 6, 10
    A, T, H = tu.general(n, F64, gen), tu.tall(m, n, F64, gen), tu.hpd(n, F64, gen)
    B, C = tu.rhs(n, 2, F64, gen), tu.rhs(m, 2, F64, gen)

    def f(a, t, h, b, c):
        x = mt.getrs([a[:, :3], a[:, 3:]], b)
        y = mt.gels([t[:, :3], t[:, 3:]], c)
        z, ld = mt.potrs([h[:, :3], h[:, 3:]], b, return_logdet=True)
        return (x.sin() ** 2).sum() + (y ** 2).sum() + z.sum() * ld, x, y

    leaves = [t.clone().requires_grad_() for t in (A, T, H)]
    loss, x, y = torch.compile(f, fullgraph=True)(*leaves, B, C)
    tu.check_getrs(A, B, x.detach())
    tu.check_gels(T, C, y.detach())
    loss.backward()
    ref = [t.clone().requires_grad_() for t in (A, T, H)]
    f(*ref, B, C)[0].backward()
    for got, want in zip(leaves, ref):
        assert torch.allclose(got.grad, want.grad)
