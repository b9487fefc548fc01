"""Issue 29 GPU probe, run by run-probe-jit-polar.sh (usage there): polar
611 x 401 f64 on cusolvermp, eagerly and inside jax.jit, in every process,
the full error if any; then a refused jitted call (gels on several
processes), clear_failure(), and a clean exit."""
import sys

import jax
import numpy as np

me, nproc, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
jax.config.update("jax_enable_x64", True)
jax.distributed.initialize(f"localhost:{port}", nproc, me, local_device_ids=[me])
from muster_jax import distributed as md
m, n = 611, 401
k = -(-n // nproc)
cut = slice(min(n, k * me), min(n, k * me + k))
a = np.random.default_rng(3).standard_normal((m, n))
s = md.store_set(timeout=30)


def put(x):
    return jax.device_put(x, jax.local_devices()[0])


def run(label, f):
    try:
        out = jax.block_until_ready(f())
        print(f"proc {me}: {label} ok", flush=True)
        return out
    except Exception as e:
        print(f"proc {me}: {label} FAILED: {type(e).__name__}: {e}"[:3000], flush=True)
        try:
            md.clear_failure(); print(f"proc {me}: cleared", flush=True)
        except Exception as e2:
            print(f"proc {me}: clear FAILED: {e2}"[:1500], flush=True)


out = run("eager polar", lambda: md.solve("polar", put(a[:, cut]), n=n, m=m, store=s, provider="cusolvermp", dtype="f64"))
jp = jax.jit(lambda x: md.solve("polar", x, n=n, m=m, store=s, provider="cusolvermp", dtype="f64"))
out = run("jitted polar", lambda: jp(put(a[:, cut])))
if out is not None:
    up, h = (np.asarray(x) for x in out)
    print(f"proc {me}: shapes {up.shape} {h.shape}", flush=True)
jg = jax.jit(lambda x, b: md.solve("gels", x, b, n=n, m=m, store=s, provider="cusolvermp", dtype="f64"))
run("jitted gels (refused)", lambda: jg(put(a[:, cut]), put(np.ones((m, 1)))))
s.close()
jax.distributed.shutdown()
print(f"proc {me}: exit clean", flush=True)
