"""Derivatives (gradcheck, double precision, through a function that
symmetrizes its input: the ops read a Hermitian A), torch.library.opcheck of
every op, and torch.compile of a function calling potrs."""
import pytest
import torch

import muster_torch as mt
import torch_util as tu

GRAD_DTYPES = (torch.float64, torch.complex128)


def sym(a):
    return (a + a.mH) / 2


def gauge_free(v):
    """|v|^2: eigenvectors are defined up to a phase per column."""
    return (v * v.conj()).real


@pytest.mark.parametrize("nranks", (1, 2))
@pytest.mark.parametrize("dtype", GRAD_DTYPES, ids=str)
def test_gradcheck(dtype, nranks, gen):
    n = 5
    A = tu.hpd(n, dtype, gen).requires_grad_()
    B = tu.rhs(n, 2, dtype, gen).requires_grad_()
    blocks = lambda a: mt.split_columns(sym(a), nranks)  # noqa: E731
    solve = tu.solve_conditioning(A.detach())
    assert tu.gradcheck_fd(lambda a, b: mt.potrs(blocks(a), b), (A, B), *solve)
    assert tu.gradcheck_fd(lambda a, b: mt.potrs(blocks(a), b[:, 0]), (A, B), *solve)
    assert tu.gradcheck_fd(lambda a: mt.cat_columns(mt.potri(blocks(a))), (A,), *solve)
    H = tu.herm(n, dtype, gen).requires_grad_()
    eigen = tu.eigen_conditioning(H.detach())
    assert tu.gradcheck_fd(lambda a: mt.syevd(blocks(a), return_eigenvectors=False), (H,), *eigen)
    assert tu.gradcheck_fd(lambda a: [mt.syevd(blocks(a))[0],
                                      gauge_free(mt.cat_columns(mt.syevd(blocks(a))[1]))], (H,), *eigen)


def test_gradient_matches_torch_linalg(gen):
    n = 8
    A = tu.hpd(n, torch.float64, gen)
    B = tu.rhs(n, 3, torch.float64, gen)
    a1, b1 = A.clone().requires_grad_(), B.clone().requires_grad_()
    (torch.cholesky_solve(b1, torch.linalg.cholesky(sym(a1))) ** 2).sum().backward()
    a2, b2 = A.clone().requires_grad_(), B.clone().requires_grad_()
    (mt.potrs(mt.split_columns(sym(a2), 2), b2) ** 2).sum().backward()
    assert torch.allclose(a1.grad, a2.grad, atol=1e-12) and torch.allclose(b1.grad, b2.grad)


def _opcheck_args(nranks, dtype):
    # distinct eigenvalues: at a repeated one syevd's derivative is infinite
    # (as torch.linalg.eigh's), and opcheck compares NaN with NaN as different
    A = (torch.diag(torch.arange(1.0, 7.0)) + 0.1).to(dtype)
    blocks = mt.split_columns(A, nranks)
    grad = [t.clone().requires_grad_() for t in blocks]
    b = torch.ones(6, 2, dtype=dtype)
    rest = ("", 0, nranks, 0, "", 0.0)
    return [
        (torch.ops.muster.potrs.default, (blocks, b, *rest)),
        (torch.ops.muster.potrs.default, (grad, b.clone().requires_grad_(), *rest)),
        (torch.ops.muster.potri.default, (grad, *rest)),
        (torch.ops.muster.syevd.default, (grad, True, *rest)),
        (torch.ops.muster.syevd.default, (blocks, False, *rest)),
    ]


@pytest.mark.parametrize("nranks", (1, 2))
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_opcheck(dtype, nranks):
    for op, args in _opcheck_args(nranks, dtype):
        torch.library.opcheck(op, args)


def test_compile_potrs(gen):
    """torch.compile with its default backend (inductor: C++ code for the CPU,
    gcc and Python.h needed, tools/ci/install-torch.sh sees to them),
    fullgraph: the op is traced through its fake implementation, not a graph
    break; forward and backward are compiled, the op runs inside."""
    n = 6
    A = tu.hpd(n, torch.float64, gen)
    B = tu.rhs(n, 2, torch.float64, gen)

    @torch.compile(fullgraph=True)
    def solve(a, b):
        x = mt.potrs([a[:, :3], a[:, 3:]], b * 2)
        return (x.sin() ** 2).sum(), x

    a = A.clone().requires_grad_()
    loss, x = solve(a, B)
    tu.check_potrs(A, B * 2, x.detach())
    loss.backward()
    a2 = A.clone().requires_grad_()
    (mt.potrs(mt.split_columns(a2, 2), B * 2).sin() ** 2).sum().backward()
    assert torch.allclose(a.grad, a2.grad)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] >= 1


def test_compile_gradient_of_b_only(gen):
    """Blocks that do not require grad, b that does: potrs's backward returns
    a list of Nones for the blocks (a bare None failed AOTAutograd's check
    that the gradients have the inputs' structure)."""
    n = 6
    A = tu.hpd(n, torch.float64, gen)
    blocks = mt.split_columns(A, 2)
    b = tu.rhs(n, 2, torch.float64, gen).requires_grad_()
    loss = torch.compile(lambda bl, b: (mt.potrs(bl, b) ** 2).sum(), fullgraph=True,
                         backend="aot_eager")
    loss(blocks, b).backward()
    b2 = b.detach().clone().requires_grad_()
    (torch.cholesky_solve(b2, torch.linalg.cholesky(A)) ** 2).sum().backward()
    assert torch.allclose(b.grad, b2.grad)
