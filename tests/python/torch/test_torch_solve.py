"""One process holding every column block (muster_solve_all): each op x
dtype on 1, 2 and 4 CPU ranks, fresh random inputs, residuals with
tolerances scaled by dtype, n and condition; the layouts of the results;
inputs left unchanged; meta tensors."""
import pytest
import torch

import muster_torch as mt
import torch_util as tu

RANKS = (1, 2, 4)


@pytest.mark.parametrize("nranks", RANKS)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_potrs(dtype, nranks, gen):
    n = 7 * nranks + 3
    A, B = tu.hpd(n, dtype, gen), tu.rhs(n, 4, dtype, gen)
    blocks = mt.split_columns(A, nranks)
    before = [b.clone() for b in blocks]
    X = mt.potrs(blocks, B)
    tu.check_potrs(A, B, X)
    assert X.stride() == (1, n)  # column-major, as torch.linalg returns
    x1 = mt.potrs(blocks, B[:, 1])  # a vector b gives a vector x
    assert x1.shape == (n,)
    tu.check_potrs(A, B[:, 1], x1)
    assert all(torch.equal(b, c) for b, c in zip(blocks, before))


@pytest.mark.parametrize("nranks", RANKS)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_potri(dtype, nranks, gen):
    n = 5 * nranks + 2
    A = tu.hpd(n, dtype, gen)
    blocks = mt.split_columns(A, nranks)
    inv = mt.potri(blocks)
    assert [t.shape for t in inv] == [t.shape for t in blocks]
    tu.check_potri(A, mt.cat_columns(inv))


@pytest.mark.parametrize("nranks", RANKS)
@pytest.mark.parametrize("dtype", tu.DTYPES, ids=str)
def test_syevd(dtype, nranks, gen):
    n = 6 * nranks + 1
    A = tu.herm(n, dtype, gen)
    blocks = mt.split_columns(A, nranks)
    w, v = mt.syevd(blocks)
    tu.check_syevd(A, w, mt.cat_columns(v))
    w_only = mt.syevd(blocks, return_eigenvectors=False)
    assert torch.allclose(w_only, w, rtol=0, atol=tu.tol(dtype, n) * float(w.abs().max()))


def test_more_ranks_than_columns(gen):
    # n = 3 over 4 ranks: blocks of 1 column, the last rank holds none
    A = tu.hpd(3, torch.float64, gen)
    blocks = mt.split_columns(A, 4)
    assert [b.shape[1] for b in blocks] == [1, 1, 1, 0]
    tu.check_potri(A, mt.cat_columns(mt.potri(blocks)))


def test_single_tensor_is_one_shard(gen):
    A, B = tu.hpd(9, torch.float64, gen), tu.rhs(9, 2, torch.float64, gen)
    tu.check_potrs(A, B, mt.potrs(A, B))
    inv = mt.potri(A)
    assert isinstance(inv, torch.Tensor)
    tu.check_potri(A, inv)


def test_block_columns_is_the_runtime_rule():
    assert mt.block_columns(10, 4, 0) == (0, 3)
    assert mt.block_columns(10, 4, 3) == (9, 1)
    assert mt.block_columns(5, 4, 3) == (5, 0)
    with pytest.raises(ValueError):
        mt.block_columns(10, 4, 4)


def test_meta_tensors_give_shapes_only():
    a = [torch.empty((6, 3), dtype=torch.complex64, device="meta")] * 2
    x = mt.potrs(a, torch.empty((6, 2), dtype=torch.complex64, device="meta"))
    assert x.device.type == "meta" and x.shape == (6, 2) and x.stride() == (1, 6)
    w, v = mt.syevd(a)
    assert w.dtype == torch.float32 and w.shape == (6,) and [t.shape for t in v] == [(6, 3)] * 2
    assert [t.shape for t in mt.potri(a)] == [(6, 3)] * 2
