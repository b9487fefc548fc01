"""muster_jax.release(): after a solve the provider that ran it is
unloaded (nothing of muster's providers left mapped in this process), the
next solve loads it again and is right, and a release with nothing loaded
does nothing (docs/jax.md, include/muster/providers.h)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import muster_jax as mj
from jaxtest_util import check_potrs, hpd, rhs

SPECS = (P(None, "x"), P(None, None))


def providers_mapped():
    """The provider files (<lib>/muster/providers/...) mapped in this process."""
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if "/muster/providers/" in line})


def solve(rng, mesh):
    a, b = hpd(rng, 16, np.float64), rhs(rng, 16, 2, np.float64)
    x = mj.potrs(jnp.asarray(a), jnp.asarray(b), mesh=mesh, in_specs=SPECS)
    x.block_until_ready()  # every device's call returned (np.asarray may read one shard)
    assert check_potrs(a, b, np.asarray(x)) < 30.0


def test_release_unloads_and_next_solve_reloads(rng):
    mesh = jax.make_mesh((2,), ("x",), devices=jax.devices()[:2])
    solve(rng, mesh)
    assert providers_mapped(), "a solve loaded a provider"
    assert mj.release() is None
    assert providers_mapped() == []
    solve(rng, mesh)  # loaded again, lazily, and right
    assert providers_mapped()
    mj.release()
    mj.release()  # nothing loaded: a no-op
    assert providers_mapped() == []
