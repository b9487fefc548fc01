"""muster_jax.linalg: jax.numpy.linalg / jax.scipy.linalg names, signatures
and result types on muster's distributed solvers.

| here | muster routine | jnp / jax.scipy counterpart |
| --- | --- | --- |
| solve(a, b, lower=False, ..., assume_a="gen") | getrs; potrs for "pos" | jax.scipy.linalg.solve, jnp.linalg.solve |
| cho_factor(a, lower=False) -> (CholeskyFactor, lower) | potrs (factor kept, distributed) | jax.scipy.linalg.cho_factor |
| cho_solve((c, lower), b) | substitutions with that factor | jax.scipy.linalg.cho_solve |
| eigh(a, UPLO=None, symmetrize_input=True) -> EighResult | syevd | jnp.linalg.eigh |
| eigvalsh(a, UPLO="L") | syevd without vectors | jnp.linalg.eigvalsh |
| inv(a, *, assume_a="gen") | getrs of I; potri for "pos" | jnp.linalg.inv |
| lstsq(a, b, rcond=None) -> (x, resid, rank, s) | gels; s from gesvd | jnp.linalg.lstsq |
| slogdet(a, *, assume_a="gen") -> SlogdetResult | potrs's log det ("pos"), syevd ("her") | jnp.linalg.slogdet |
| qr(a, mode="reduced") -> QRResult (R for mode="r") | geqrf | jnp.linalg.qr |
| svd(a, full_matrices=True, compute_uv=True) -> SVDResult | gesvd | jnp.linalg.svd |
| svdvals(x) | gesvd without vectors | jnp.linalg.svdvals |
| polar(a, side="right") -> (u, p) | polar | jax.scipy.linalg.polar |

Every function takes a 2-D array (qr, svd, polar: any M x N) (jax, numpy, or array-like), sharded
over one dimension of a mesh or not at all; it solves on a's mesh, else
the mesh of `with jax.set_mesh(...)`, else every device of the default
backend (mesh= overrides).  Extra keyword arguments: mesh, T_A, provider.
Each call is one XLA program, eager or traced; a numerical failure raises
JaxRuntimeError INVALID_ARGUMENT (docs/errors.md) where jnp returns NaN.
Derivatives come from the LAPACK-named functions' rules.  docs/jax.md,
"jnp-style names", has the table and the differences.
"""
from ._cho import CholeskyFactor, cho_factor, cho_solve
from ._eigh import eigh, eigvalsh
from ._factorizations import polar, qr, svd, svdvals
from ._lstsq import lstsq
from ._results import EighResult, QRResult, SlogdetResult, SVDResult
from ._slogdet import slogdet
from ._solve import inv, solve

__all__ = ["solve", "cho_factor", "cho_solve", "CholeskyFactor", "eigh", "eigvalsh", "inv", "lstsq",
           "slogdet", "qr", "svd", "svdvals", "polar", "EighResult", "SlogdetResult", "QRResult", "SVDResult"]
