"""jnp.linalg's named-tuple result types (EighResult, SlogdetResult,
QRResult, SVDResult): jax's
own classes where this jax has them, else ones with the same fields."""
from typing import NamedTuple

import jax

try:
    from jax._src.numpy.linalg import EighResult, QRResult, SlogdetResult, SVDResult
except ImportError:  # pragma: no cover - older or newer jax
    class EighResult(NamedTuple):
        eigenvalues: jax.Array
        eigenvectors: jax.Array

    class SlogdetResult(NamedTuple):
        sign: jax.Array
        logabsdet: jax.Array

    class QRResult(NamedTuple):
        Q: jax.Array
        R: jax.Array

    class SVDResult(NamedTuple):
        U: jax.Array
        S: jax.Array
        Vh: jax.Array
