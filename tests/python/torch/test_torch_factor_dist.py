"""qr, svd, svdvals and polar with group=: 2 and 3 gloo processes
(torch.multiprocessing, forkserver, as test_torch_dist.py), each passing
its own column block; the checks run inside the workers (factor_worker.py)
against torch.linalg on the whole matrix."""
import os

import pytest

import factor_worker
from test_torch_dist import assert_case, results, start


@pytest.fixture(scope="module", params=(2, 3), ids=lambda r: f"{r}procs")
def factored(request, tmp_path_factory):
    nranks = request.param
    tmp = tmp_path_factory.mktemp(f"factors{nranks}")
    seed = int.from_bytes(os.urandom(4), "little")
    return nranks, seed, results(start(nranks, tmp, "factors", seed=seed), tmp)


@pytest.mark.parametrize("case", factor_worker.CASES)
def test_factors(factored, case):
    assert_case(*factored, case)
