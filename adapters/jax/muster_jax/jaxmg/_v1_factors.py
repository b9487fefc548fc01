"""jaxmg 1.4.1's qr, gesvd and polar, and their *_shardmap_ctx forms, on
muster's geqrf, gesvd and polar (signatures as in jaxmg's source: taken as
facts, docs/jax-jaxmg.md).

As for v1's solvers: T_A is a hint, pad and donate are accepted and
ignored, the status is an int32 (0 ok, else a MUSTER_E* code or the
routine's info) and a failure raises unless return_status.  The *_ctx
forms return the work buffer first (A as given: muster overwrites nothing
of the caller's) and the status always.  jaxmg requires m >= n for qr and
polar and so do these; muster_jax.linalg's qr and polar take a wide A too.
These are not differentiable (jaxmg's are not); muster_jax.linalg's are.
"""
import jax
from jax.sharding import Mesh

from .. import _factors
from .._call import GEQRF, GESVD, POLAR
from ._common import tile


def _run(what: str, routine: int, flags: int, a, T_A, mesh, matrix_specs, in_specs, return_status: bool,
         tall: bool) -> dict:
    from . import v1  # v1 imports this module
    mesh, spec = v1._layout_of(a, mesh, matrix_specs, in_specs, what)
    if tall and a.ndim == 2 and a.shape[0] < a.shape[1]:
        raise ValueError(f"{what} requires a tall or square matrix with m >= n, got shape {a.shape} "
                         "(muster_jax.linalg takes a wide one)")
    cfg = _factors.config(a, mesh, spec, tile(T_A, a.shape[1], v1._ndev(mesh, spec)), None, what,
                          return_status=return_status)
    return _factors.factor(cfg, routine, flags, a)


def qr(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *, in_specs=None,
       return_status: bool = False, pad: bool = True, donate: bool = True):
    """Reduced QR of a tall or square A (jaxmg 1.4.1: qr(a, T_A, mesh=None,
    matrix_specs=None, *, in_specs=None, return_status=False, pad=True,
    donate=True)).

    Returns:
      (Q m x n, R n x n), or (Q, R, status).
    """
    got = _run("jaxmg.qr", GEQRF, 0, a, T_A, mesh, matrix_specs, in_specs, return_status, True)
    out = (got[_factors.Q], got[_factors.R])
    return (*out, got["status"]) if return_status else out


def gesvd(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
          in_specs=None, compute_u: bool = True, compute_vh: bool = True, full_matrices: bool = False,
          return_status: bool = False, pad: bool = True, donate: bool = True):
    """SVD of A, any m x n (jaxmg 1.4.1: gesvd(a, T_A, mesh=None,
    matrix_specs=None, *, in_specs=None, compute_u=True, compute_vh=True,
    full_matrices=False, return_status=False, pad=True, donate=True)).

    Returns:
      (U, s, Vh), (U, s), (s, Vh) or s as compute_u / compute_vh ask (thin
      shapes m x k, k x n unless full_matrices), the status appended with
      return_status.
    """
    got = _svd(a, T_A, mesh, matrix_specs, in_specs, compute_u, compute_vh, full_matrices, return_status)
    out = tuple(x for x, want in ((got.get(_factors.U), compute_u), (got["s"], True),
                                  (got.get(_factors.VH), compute_vh)) if want)
    out = out + ((got["status"],) if return_status else ())
    return out[0] if len(out) == 1 else out


def _svd(a, T_A, mesh, matrix_specs, in_specs, compute_u, compute_vh, full_matrices, return_status) -> dict:
    for name, value in (("compute_u", compute_u), ("compute_vh", compute_vh), ("full_matrices", full_matrices)):
        if not isinstance(value, bool):
            raise TypeError(f"jaxmg.gesvd: {name} must be a Python bool")
    vectors = compute_u or compute_vh
    return _run("jaxmg.gesvd", GESVD, _factors.flags_of(full_matrices, vectors), a, T_A, mesh, matrix_specs,
                in_specs, return_status, False)


def polar(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *, in_specs=None,
          compute_h: bool = True, return_status: bool = False, pad: bool = True, donate: bool = True):
    """Polar decomposition A = Up H of a tall or square A (jaxmg 1.4.1:
    polar(a, T_A, mesh=None, matrix_specs=None, *, in_specs=None,
    compute_h=True, return_status=False, pad=True, donate=True)).

    Returns:
      (Up, H), or Up without compute_h; the status appended with
      return_status.
    """
    got = _run("jaxmg.polar", POLAR, 0, a, T_A, mesh, matrix_specs, in_specs, return_status, True)
    out = (got[_factors.UP],) + ((got[_factors.H],) if compute_h else ())
    out = out + ((got["status"],) if return_status else ())
    return out[0] if len(out) == 1 else out


def qr_shardmap_ctx(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
                    in_specs=None, pad: bool = True):
    """qr for a caller-owned jax.jit (jaxmg 1.4.1: qr_shardmap_ctx(a, T_A,
    mesh=None, matrix_specs=None, *, in_specs=None, pad=True)).

    Returns:
      (Q, R, status).
    """
    return qr(a, T_A, mesh, matrix_specs, in_specs=in_specs, return_status=True)


def gesvd_shardmap_ctx(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
                       in_specs=None, compute_u: bool = True, compute_vh: bool = True,
                       full_matrices: bool = False, pad: bool = True):
    """gesvd for a caller-owned jax.jit (jaxmg 1.4.1: gesvd_shardmap_ctx(a,
    T_A, mesh=None, matrix_specs=None, *, in_specs=None, compute_u=True,
    compute_vh=True, full_matrices=False, pad=True)).

    Returns:
      (a_work, U, s, Vh, status), (a_work, U, s, status), (a_work, s, Vh,
      status) or (a_work, s, status); a_work is A as given.
    """
    out = gesvd(a, T_A, mesh, matrix_specs, in_specs=in_specs, compute_u=compute_u, compute_vh=compute_vh,
                full_matrices=full_matrices, return_status=True)
    return (a, *out)


def polar_shardmap_ctx(a: jax.Array, T_A: int | None = None, mesh: Mesh | None = None, matrix_specs=None, *,
                       in_specs=None, compute_h: bool = True, pad: bool = True):
    """polar for a caller-owned jax.jit (jaxmg 1.4.1: polar_shardmap_ctx(a,
    T_A, mesh=None, matrix_specs=None, *, in_specs=None, compute_h=True,
    pad=True)).

    Returns:
      (Up, H, status), or (Up, status) without compute_h.
    """
    return polar(a, T_A, mesh, matrix_specs, in_specs=in_specs, compute_h=compute_h, return_status=True)
