"""muster_torch.release(): after a solve the provider that ran it is
unloaded (nothing of muster's providers left mapped in this process), the
next solve loads it again and is right, and a release with nothing loaded
does nothing (docs/torch.md, include/muster/providers.h).  Skipped where
torch is absent as every test here is (conftest.py imports it)."""
import torch

import muster_torch as mt
import torch_util as tu


def providers_mapped():
    """The provider files (<lib>/muster/providers/...) mapped in this process."""
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if "/muster/providers/" in line})


def solve(gen):
    n = 17
    A, B = tu.hpd(n, torch.float64, gen), tu.rhs(n, 2, torch.float64, gen)
    tu.check_potrs(A, B, mt.potrs(mt.split_columns(A, 2), B))  # returns once every rank's call did


def test_release_unloads_and_next_solve_reloads(gen):
    solve(gen)
    assert providers_mapped(), "a solve loaded a provider"
    assert mt.release() is None
    assert providers_mapped() == []
    solve(gen)  # loaded again, lazily, and right
    assert providers_mapped()
    mt.release()
    mt.release()  # nothing loaded: a no-op
    assert providers_mapped() == []
