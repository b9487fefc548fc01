"""muster_torch.linalg against torch.linalg, one matrix at a time: every
function x dtype on fresh random inputs, as one shard and split over 2 CPU
ranks (devices=2); forward errors bounded by n eps cond(A) scaled to the
dtype (torch_util.tol); the result types; gradients (gradcheck with
fdcheck's step and tolerances, and equal to torch.linalg's); the errors of
wrong shapes and arguments.  Batches and vmap: test_torch_batch.py."""
import pytest
import torch

import muster_torch as mt
import torch_util as tu

F64, C128 = torch.float64, torch.complex128
DEVICES = (None, 2)  # one shard; 2 CPU ranks


def wide(t):
    return t.to(C128 if t.is_complex() else F64)


def cond(a):
    return float(torch.linalg.cond(wide(a)))


def assert_close(got, want, bound, what):
    """max |got - want| <= bound * max(1, max |want|), in double."""
    g, w = wide(got), wide(want)
    err = float((g - w).abs().max()) / max(1.0, float(w.abs().max()))
    assert err <= bound, f"{what}: error {err:.3g} > {bound:.3g}"


def sym(a):
    return (a + a.mH) / 2


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("left", (True, False))
@pytest.mark.parametrize("assume", ("gen", "pos"))
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_solve(dtype, assume, left, devices, gen):
    n = 9
    A = tu.hpd(n, dtype, gen) if assume == "pos" else tu.general(n, dtype, gen)
    B = tu.rhs(n, 3, dtype, gen)
    B = B if left else B.mT.contiguous()
    X = mt.linalg.solve(A, B, left=left, assume=assume, devices=devices)
    want = torch.linalg.solve(wide(A), wide(B), left=left)
    assert X.shape == want.shape and X.dtype == dtype
    assert_close(X, want, tu.tol(dtype, n, cond(A)), "X")
    tu.check_getrs(A, B, X) if left else tu.check_getrs(A.mT, B.mT, X.mT)
    x = mt.linalg.solve(A, B[:, 0] if left else B[0], left=left, assume=assume, devices=devices)
    # a vector b with left=False is x A = b (torch.linalg.solve rejects it)
    want = torch.linalg.solve(wide(A) if left else wide(A).mT, wide(B[:, 0] if left else B[0]))
    assert x.shape == (n,)
    assert_close(x, want, tu.tol(dtype, n, cond(A)), "x")


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("uplo", ("L", "U"))
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_eigh(dtype, uplo, devices, gen):
    n = 8
    H = tu.herm(n, dtype, gen)
    junk = tu.rhs(n, n, dtype, gen)  # in the triangle UPLO says not to read
    ones = torch.ones(n, n, dtype=torch.bool)
    A = torch.where(ones.tril() if uplo == "L" else ones.triu(), H, junk)
    out = mt.linalg.eigh(A, UPLO=uplo, devices=devices)
    assert isinstance(out, torch.return_types.linalg_eigh)
    w, V = out
    assert out.eigenvalues is w and out.eigenvectors is V
    tu.check_syevd(H, w, V)
    ref = torch.linalg.eigvalsh(wide(A), UPLO=uplo)
    assert_close(w, ref, tu.tol(dtype, n), "eigenvalues")
    w2 = mt.linalg.eigvalsh(A, UPLO=uplo, devices=devices)
    assert w2.dtype == w.dtype and w2.shape == (n,)
    assert_close(w2, ref, tu.tol(dtype, n), "eigvalsh")


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("assume", ("gen", "pos"))
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_inv(dtype, assume, devices, gen):
    n = 7
    A = tu.hpd(n, dtype, gen) if assume == "pos" else tu.general(n, dtype, gen)
    Y = mt.linalg.inv(A, assume=assume, devices=devices)
    assert Y.shape == (n, n) and Y.dtype == dtype
    assert_close(Y, torch.linalg.inv(wide(A)), tu.tol(dtype, n, cond(A)), "inverse")
    if assume == "pos":
        tu.check_potri(A, Y)


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_lstsq(dtype, devices, gen):
    m, n = 15, 6
    A, B = tu.tall(m, n, dtype, gen), tu.rhs(m, 2, dtype, gen)
    out = mt.linalg.lstsq(A, B, devices=devices)
    assert isinstance(out, torch.return_types.linalg_lstsq)
    ref = torch.linalg.lstsq(wide(A), wide(B), driver="gels")
    c = cond(A)
    tu.check_gels(A, B, out.solution, cond=c)
    # with a residual the solution moves by cond^2 eps (Wedin)
    assert_close(out.solution, ref.solution, tu.tol(dtype, m, c + c * c), "solution")
    real = torch.float32 if dtype in (torch.float32, torch.complex64) else F64
    assert out.residuals.shape == (2,) and out.residuals.dtype == real
    assert_close(out.residuals, ref.residuals, tu.tol(dtype, m, c + c * c), "residuals")
    assert out.rank.dtype == torch.int64 and out.rank.shape == () and int(out.rank) == n
    assert out.singular_values.shape == (0,) and out.singular_values.dtype == real
    vec = mt.linalg.lstsq(A, B[:, 0], devices=devices)
    assert vec.solution.shape == (n,) and vec.residuals.shape == (1,)
    assert_close(vec.solution, ref.solution[:, 0], tu.tol(dtype, m, c + c * c), "vector")
    S = tu.general(n, dtype, gen)  # square: no residuals, as torch
    sq = mt.linalg.lstsq(S, B[:n], devices=devices)
    assert sq.residuals.shape == (0,)
    assert_close(sq.solution, torch.linalg.solve(wide(S), wide(B[:n])), tu.tol(dtype, n, cond(S)),
                 "square")


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_slogdet(dtype, devices, gen):
    n = 9
    A = tu.hpd(n, dtype, gen, shift=0.3)
    out = mt.linalg.slogdet(A, assume="pos", devices=devices)
    assert isinstance(out, torch.return_types.linalg_slogdet)
    sign, ref = torch.linalg.slogdet(wide(A))
    assert out.sign.dtype == dtype and out.sign.shape == ()
    assert abs(complex(out.sign) - complex(sign)) < 1e-6
    tu.check_logdet(A, out.logabsdet)


@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_slogdet_general(dtype, gen):
    """A general (non-Hermitian) A, the default assume="gen": torch's sign
    and log |det A|, a negative determinant's sign included."""
    n = 9
    A = tu.general(n, dtype, gen)
    A[0] = -A[0]  # a real A's det turns negative
    out = mt.linalg.slogdet(A)
    assert isinstance(out, torch.return_types.linalg_slogdet)
    sign, ref = torch.linalg.slogdet(wide(A))
    assert out.sign.dtype == dtype and out.logabsdet.dtype == A.real.dtype
    assert abs(complex(out.sign) - complex(sign)) < tu.tol(dtype, n, cond(A))
    assert abs(float(out.logabsdet) - float(ref)) < tu.tol(dtype, n, cond(A)) * max(1, abs(float(ref)))
    if not dtype.is_complex:
        assert float(out.sign) == -1.0


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_lstsq_wide(dtype, devices, gen):
    """A wide A (m < n, full row rank): the minimum-norm solution, as
    torch's gelsd gives it; A X = B exactly (to rounding)."""
    m, n = 5, 11
    A, B = tu.tall(n, m, dtype, gen).mH.contiguous(), tu.rhs(m, 2, dtype, gen)
    out = mt.linalg.lstsq(A, B, devices=devices)
    ref = torch.linalg.lstsq(wide(A), wide(B), driver="gelsd")
    c = cond(A)
    assert out.solution.shape == (n, 2) and out.solution.dtype == dtype
    assert_close(out.solution, ref.solution, tu.tol(dtype, n, c * c), "solution")
    assert_close(A @ out.solution, B, tu.tol(dtype, n, c * c), "A X = B")
    assert out.residuals.shape == (0,) and int(out.rank) == m
    vec = mt.linalg.lstsq(A, B[:, 0], devices=devices)
    assert vec.solution.shape == (n,)
    assert_close(vec.solution, ref.solution[:, 0], tu.tol(dtype, n, c * c), "vector")
    batch = mt.linalg.lstsq(torch.stack([A, 2 * A]), torch.stack([B, B]))
    assert_close(batch.solution[1], ref.solution / 2, tu.tol(dtype, n, c * c), "batch")


# ------------------------------------------------------------------ gradients
GRAD = (F64, C128)


@pytest.mark.parametrize("dtype", GRAD, ids=str)
def test_gradcheck(dtype, gen):
    n = 4
    L = mt.linalg
    G, H = tu.general(n, dtype, gen).requires_grad_(), tu.hpd(n, dtype, gen).requires_grad_()
    B = tu.rhs(n, 2, dtype, gen).requires_grad_()
    lu, chol = tu.solve_conditioning(G.detach()), tu.solve_conditioning(H.detach())
    assert tu.gradcheck_fd(lambda a, b: L.solve(a, b), (G, B), *lu)
    assert tu.gradcheck_fd(lambda a, b: L.solve(a, b.mT, left=False), (G, B), *lu)
    assert tu.gradcheck_fd(lambda a, b: L.solve(sym(a), b, assume="pos", devices=2), (H, B), *chol)
    assert tu.gradcheck_fd(lambda a: L.inv(a, devices=2), (G,), *lu)
    assert tu.gradcheck_fd(lambda a: L.inv(sym(a), assume="pos"), (H,), *chol)
    assert tu.gradcheck_fd(lambda a: L.slogdet(sym(a), assume="pos").logabsdet, (H,), *chol)
    E = tu.herm(n, dtype, gen).requires_grad_()
    eig = tu.eigen_conditioning(E.detach())
    assert tu.gradcheck_fd(lambda a: L.eigvalsh(sym(a)), (E,), *eig)
    assert tu.gradcheck_fd(lambda a: (lambda r: (r.eigenvalues, (r.eigenvectors.abs() ** 2)))(
        L.eigh(sym(a), devices=2)), (E,), *eig)
    T, C = tu.tall(9, n, dtype, gen).requires_grad_(), tu.rhs(9, 2, dtype, gen).requires_grad_()
    ls = tu.solve_conditioning(T.detach(), least_squares=True)
    assert tu.gradcheck_fd(lambda a, b: L.lstsq(a, b).solution, (T, C), *ls)
    W = T.detach().mH.contiguous().requires_grad_()  # wide, full row rank
    assert tu.gradcheck_fd(lambda a, b: L.lstsq(a, b, devices=2).solution, (W, C[:n]), *ls)
    assert tu.gradcheck_fd(lambda a: L.slogdet(a).logabsdet, (G,), *lu)


def test_gradients_match_torch_linalg(gen):
    n = 6
    G, H, E = tu.general(n, F64, gen), tu.hpd(n, F64, gen), tu.herm(n, F64, gen)
    B, T, C = tu.rhs(n, 2, F64, gen), tu.tall(11, n, F64, gen), tu.rhs(11, 2, F64, gen)
    TL, L = torch.linalg, mt.linalg
    cases = [  # (torch's, ours, inputs)
        (lambda a, b: TL.solve(a, b), lambda a, b: L.solve(a, b, devices=2), (G, B)),
        (lambda a, b: torch.cholesky_solve(b, TL.cholesky(sym(a))),
         lambda a, b: L.solve(sym(a), b, assume="pos"), (H, B)),
        (lambda a: TL.inv(a), lambda a: L.inv(a), (G,)),
        (lambda a: TL.inv(sym(a)), lambda a: L.inv(sym(a), assume="pos", devices=2), (H,)),
        (lambda a: TL.slogdet(sym(a)).logabsdet,
         lambda a: L.slogdet(sym(a), assume="pos").logabsdet, (H,)),
        (lambda a: TL.eigvalsh(a), lambda a: L.eigvalsh(a), (E,)),
        (lambda a, b: TL.lstsq(a, b).solution, lambda a, b: L.lstsq(a, b).solution, (T, C)),
        (lambda a, b: TL.lstsq(a, b, driver="gels").residuals,
         lambda a, b: L.lstsq(a, b).residuals, (T, C)),
        (lambda a, b: TL.lstsq(a, b, driver="gelsd").solution,
         lambda a, b: L.lstsq(a, b, devices=2).solution, (T.mT.contiguous(), C[:n])),
        (lambda a: TL.slogdet(a).logabsdet, lambda a: L.slogdet(a).logabsdet, (G,)),
    ]
    for ref, ours, xs in cases:
        r = [x.clone().requires_grad_() for x in xs]
        (ref(*r).sin() ** 2).sum().backward()
        o = [x.clone().requires_grad_() for x in xs]
        (ours(*o).sin() ** 2).sum().backward()
        for a, b in zip(r, o):
            assert torch.allclose(a.grad, b.grad, atol=1e-10), (a.grad - b.grad).abs().max()


# --------------------------------------------------------------------- errors
def test_wrong_shapes_are_value_errors():
    L, e3 = mt.linalg, torch.eye(3, dtype=F64)
    with pytest.raises(ValueError, match=r"A has shape \(3, 4\): a square matrix"):
        L.solve(torch.ones(3, 4, dtype=F64), torch.ones(3, dtype=F64))
    with pytest.raises(ValueError, match=r"A X = B needs B's rows to be A's 3 rows"):
        L.solve(e3, torch.ones(4, 2, dtype=F64))
    with pytest.raises(ValueError, match=r"X A = B needs B's columns"):
        L.solve(e3, torch.ones(3, 2, dtype=F64), left=False)
    with pytest.raises(ValueError, match="do not broadcast"):
        L.solve(e3.expand(2, 3, 3), torch.ones(3, 3, 1, dtype=F64))
    with pytest.raises(ValueError, match="square matrix"):
        L.eigh(torch.ones(2, 3, dtype=F64))
    with pytest.raises(ValueError, match="square matrix"):
        L.inv(torch.ones(5, dtype=F64))
    with pytest.raises(ValueError, match=r"A has shape \(5,\): a matrix"):
        L.lstsq(torch.ones(5, dtype=F64), torch.ones(5, dtype=F64))
    with pytest.raises(ValueError, match="as many dimensions"):
        L.lstsq(torch.ones(2, 5, 3, dtype=F64), torch.ones(5, dtype=F64))
    with pytest.raises(TypeError, match="B is a list"):
        L.solve(e3, [1.0, 2.0, 3.0])


def test_wrong_arguments():
    L, e3 = mt.linalg, torch.eye(3, dtype=F64)
    with pytest.raises(ValueError, match="UPLO='X'"):
        L.eigvalsh(e3, UPLO="X")
    with pytest.raises(ValueError, match="assume='sym'"):
        L.solve(e3, e3, assume="sym")
    with pytest.raises(ValueError, match="driver='gelsd'"):
        L.lstsq(e3, e3, driver="gelsd")
    with pytest.raises(TypeError, match="not supported"):
        L.solve(torch.eye(3, dtype=torch.float16), torch.ones(3, dtype=torch.float16))


def test_numerical_failures_are_linalg_errors():
    A = torch.eye(5, dtype=F64)
    A[:, 3] = A[:, 1]
    with pytest.raises(torch.linalg.LinAlgError, match="singular"):
        mt.linalg.solve(A, torch.ones(5, dtype=F64))
    A = torch.eye(5, dtype=F64)
    A[2, 2] = -1
    with pytest.raises(torch.linalg.LinAlgError) as e:
        mt.linalg.slogdet(A, assume="pos")
    assert e.value.info == 3
