"""muster_torch.linalg: torch.linalg's names, signatures and result types
for what muster solves, on top of the LAPACK-named functions (potrs, getrs,
gels, potri, syevd; muster_torch's top level).

    torch.linalg           muster_torch.linalg                   LAPACK name
    solve(A, B, left=)     solve(A, B, left=)                    getrs
    (cholesky + cholesky_solve)  solve(A, B, assume="pos")       potrs
    eigh(A, UPLO=)         eigh(A, UPLO=)                        syevd
    eigvalsh(A, UPLO=)     eigvalsh(A, UPLO=)                    syevd, no vectors
    inv(A)                 inv(A); inv(A, assume="pos")          getrs on I; potri
    lstsq(A, B)            lstsq(A, B)                           gels; potrs of A A^H (wide A)
    slogdet(A)             slogdet(A); slogdet(A, assume="pos") torch's LU; potrs's log det
    qr(A, mode=)           qr(A, mode=)                          geqrf
    svd(A, full_matrices=) svd(A, full_matrices=)                gesvd
    svdvals(A)             svdvals(A)                            gesvd, no vectors
    (none)                 polar(A, side="right") -> (u, p)      polar

A and B are whole tensors, as torch.linalg takes them, with any leading
batch dimensions (broadcast as torch.linalg does; one muster call per
matrix, _batch.py).  Each matrix is one shard on A's device unless
`devices=` splits it into column blocks: a count of CPU ranks or a list of
devices (["cuda:0", "cuda:1"]), as muster_torch.split_columns.  For blocks
already on their devices, or one process per rank (group=, DTensor), call
the LAPACK-named functions.

Every function also takes muster's tile=, provider= and timeout= (as potrs),
and none takes out=.  Shapes and dtypes raise ValueError and TypeError (torch
raises RuntimeError for both), numerical failures torch.linalg.LinAlgError
as torch does.  Gradients are those of the LAPACK-named ops (_grad.py).
"""
import torch

from . import _api, _batch
from . import _linalg_checks as checks


def _shards(a, devices):
    """One matrix as the LAPACK-named functions take it: one shard, or its
    column blocks over `devices`."""
    return a if devices is None else _api.split_columns(a, devices)


def _whole(x, device):
    """A result held like A (a tensor, or blocks when split) as one tensor."""
    return _api.cat_columns(x, device) if isinstance(x, list) else x


def solve(A, B, *, left=True, assume="gen", devices=None, tile=None, provider=None,
          timeout=None):
    """X with A X = B (X A = B for left=False): torch.linalg.solve.

    assume="gen" (default): A general, LU with partial pivoting (getrs).
    assume="pos": A Hermitian positive definite, Cholesky (potrs), which
    reads only A's lower triangle.  torch's counterpart is
    torch.cholesky_solve(B, torch.linalg.cholesky(A)); muster keeps no
    factor between calls, so there is no cholesky_solve taking a factor.
    (scipy.linalg.solve's assume_a names the same choice.)

    Shapes as torch.linalg.solve: A (*, n, n); B (*, n, k), or (*, n) (a
    batch of vectors: B 1-D, or B's shape A's without its last dimension);
    batch dimensions broadcast.  Differs: no out=; with left=False a vector
    B is a row, x A = b (torch.linalg.solve rejects a vector there).  As
    torch, a singular A raises torch.linalg.LinAlgError where LU meets an
    exact zero pivot; assume="pos" raises it for A not positive definite.
    """
    checks.square("solve", A)
    pos = checks.is_pos("solve", assume)
    vector = isinstance(B, torch.Tensor) and _batch.is_vector_rhs(A, B)
    checks.rows_match("solve", A, B, vector, left)
    if not left:  # X A = B  <=>  A^T X^T = B^T (a vector b is a row: x A = b)
        A, B = A.mT, (B if vector else B.mT)
    routine = _api.potrs if pos else _api.getrs
    batch, A, B = _batch.broadcast("solve", A, B, vector)
    x = _batch.each(lambda a, b: routine(_shards(a, devices), b, tile=tile, provider=provider,
                                         timeout=timeout), batch, A, B)
    return x if left or vector else x.mT


def eigh(A, UPLO="L", *, devices=None, tile=None, provider=None, timeout=None):
    """(eigenvalues, eigenvectors) of a Hermitian A: torch.linalg.eigh, and
    its result type (torch.return_types.linalg_eigh).

    Eigenvalues ascending, real (float32 for float32/complex64); A =
    V diag(w) V^H.  Only the UPLO triangle of A is read (muster reads the
    lower one; UPLO="U" solves A^H, whose lower triangle is A's upper one
    conjugated).  Eigenvectors are unique up to a phase per column, as in
    torch; they need not equal torch's.  Gradients as torch's (infinite at
    repeated eigenvalues).  Differs: no out=.
    """
    checks.square("eigh", A)
    checks.uplo("eigh", UPLO)
    a = A if UPLO == "L" else A.mH  # muster reads the lower triangle
    w, v = _batch.each(lambda m: _eigh_one(m, True, devices, tile, provider, timeout),
                       A.shape[:-2], a)
    return torch.return_types.linalg_eigh((w, v))


def eigvalsh(A, UPLO="L", *, devices=None, tile=None, provider=None, timeout=None):
    """The eigenvalues of a Hermitian A, ascending: torch.linalg.eigvalsh
    (syevd without eigenvectors, unless A requires grad).  As eigh."""
    checks.square("eigvalsh", A)
    checks.uplo("eigvalsh", UPLO)
    a = A if UPLO == "L" else A.mH  # muster reads the lower triangle
    return _batch.each(lambda m: _eigh_one(m, False, devices, tile, provider, timeout),
                       A.shape[:-2], a)


def _eigh_one(a, vectors, devices, tile, provider, timeout):
    out = _api.syevd(_shards(a, devices), return_eigenvectors=vectors, tile=tile,
                     provider=provider, timeout=timeout)
    if not vectors:
        return out.to(a.device)
    return out[0].to(a.device), _whole(out[1], a.device)


def inv(A, *, assume="gen", devices=None, tile=None, provider=None, timeout=None):
    """A^-1: torch.linalg.inv.

    assume="gen" (default): solves A X = I by LU (getrs, n right-hand
    sides).  assume="pos": Hermitian positive definite A, potri (Cholesky,
    then the inverse of the factor; reads A's lower triangle only): the
    result is Hermitian.  Differs: no out=.
    """
    checks.square("inv", A)
    if not checks.is_pos("inv", assume):
        eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return solve(A, eye.expand(A.shape), devices=devices, tile=tile, provider=provider,
                     timeout=timeout)
    return _batch.each(lambda a: _whole(_api.potri(_shards(a, devices), tile=tile,
                                                   provider=provider, timeout=timeout),
                                        a.device), A.shape[:-2], A)


def lstsq(A, B, rcond=None, *, driver=None, devices=None, tile=None, provider=None,
          timeout=None):
    """Least squares min ||A X - B||_F: torch.linalg.lstsq, and its result
    type (torch.return_types.linalg_lstsq: solution, residuals, rank,
    singular_values).

    A (*, m, n) of full rank, B (*, m, k), batch dimensions broadcast (torch
    broadcasts B's only), or B (*, m) of A.dim() - 1 dimensions: a batch of
    vectors (torch's rule).
      * tall or square A (m >= n, full column rank): QR (gels), as torch's
        driver="gels".
      * wide A (m < n, full row rank): the minimum-norm solution X = A^H
        (A A^H)^-1 B, what torch's "gelsy", "gelsd" and "gelss" give for a
        full row rank A (its "gels" assumes m >= n): potrs of the m x m
        Gram matrix A A^H (Hermitian positive definite).  It conditions as
        cond(A)^2 where an LQ would as cond(A): for an ill-conditioned A it
        loses about twice the digits.
    driver must be None or "gels" (muster's routines are the ones above),
    and rcond is accepted and unused (it is for the rank-revealing drivers).
    What is filled:
      solution: X (*, n, k), or (*, n) for vectors.
      residuals: the squared residual norm of each column, ||A X - B||^2
        (*, k), or (*, 1) for vectors, when m > n (as torch); computed as A X - B, so a residual
        far below ||A|| ||X|| + ||B|| has only the digits left above that
        scale.  An empty tensor when m <= n, as torch.
      rank: min(m, n) in every batch element (int64): gels and potrs raise
        torch.linalg.LinAlgError for a rank-deficient A instead of
        returning an answer, so a returned answer has full rank.  torch's
        "gels" driver leaves it empty.
      singular_values: an empty tensor (as torch's "gels" and "gelsy").
    Gradients: those of the routines (gels's; potrs's and the products
    for a wide A), torch's for a full-rank A.
    """
    checks.matrix("lstsq", A)
    if driver not in (None, "gels"):
        raise ValueError(f"muster_torch.linalg.lstsq: driver={driver!r}: muster's least "
                         "squares is QR, or the Gram matrix's Cholesky for a wide A (\"gels\" "
                         "or None)")
    vector = checks.lstsq_vector(A, B)
    checks.rows_match("lstsq", A, B, vector)
    batch, A, B = _batch.broadcast("lstsq", A, B, vector)
    m, n = A.shape[-2:]
    one = _gels_one if m >= n else _min_norm_one
    x = _batch.each(lambda a, b: one(a, b, devices, tile, provider, timeout), batch, A, B)
    real = A.real.dtype if A.is_complex() else A.dtype
    if m > n:
        r = (A @ x[..., None] - B[..., None]) if vector else (A @ x - B)
        residuals = r.abs().pow(2).sum(-2)
    else:
        residuals = torch.empty((0,), dtype=real, device=A.device)
    rank = torch.full(batch, min(m, n), dtype=torch.int64, device=A.device)
    sv = torch.empty((0,), dtype=real, device=A.device)
    return torch.return_types.linalg_lstsq((x, residuals, rank, sv))


def _gels_one(a, b, devices, tile, provider, timeout):
    return _api.gels(_shards(a, devices), b, tile=tile, provider=provider, timeout=timeout)


def _min_norm_one(a, b, devices, tile, provider, timeout):
    """x = A^H (A A^H)^-1 b for a wide A of full row rank (lstsq)."""
    gram = a @ a.mH  # Hermitian up to rounding; potrs reads its lower triangle
    y = _api.potrs(_shards(gram, devices), b, tile=tile, provider=provider, timeout=timeout)
    return a.mH @ y


def slogdet(A, *, assume="gen", devices=None, tile=None, provider=None, timeout=None):
    """(sign, logabsdet) of det A: torch.linalg.slogdet, and its result type
    (torch.return_types.linalg_slogdet).

    assume="gen" (default, any square A, as torch): torch.linalg.slogdet
    itself, LU on A's device (the matrix muster_torch.linalg takes whole):
    muster's getrs hands back no LU factors (include/muster.h: its row
    pivots would not travel back), so it has no determinant to give; the
    same choice as muster_jax.linalg.slogdet's "gen".  A singular A gives
    sign 0 and logabsdet -inf, as torch.
    assume="pos" (Hermitian positive definite A; reads its lower triangle
    only): log det A from the Cholesky factor of potrs, on the devices;
    sign 1 (in A's dtype, as torch).  A not positive definite raises
    torch.linalg.LinAlgError, where torch would return its sign.
    Gradients: torch's ("gen"), potrs's ("pos").  Differs: no out=.
    """
    checks.square("slogdet", A)
    if not checks.is_pos("slogdet", assume):
        return torch.linalg.slogdet(A)

    def one(a):
        zero = torch.zeros((a.shape[-1], 1), dtype=a.dtype, device=a.device)
        return _api.potrs(_shards(a, devices), zero, return_logdet=True, tile=tile,
                          provider=provider, timeout=timeout)[1].to(a.device)

    logabsdet = _batch.each(one, A.shape[:-2], A)
    sign = torch.ones(logabsdet.shape, dtype=A.dtype, device=A.device)
    return torch.return_types.linalg_slogdet((sign, logabsdet))


# QR, SVD and polar (geqrf, gesvd, polar): any m x n A, _factorizations.py
from ._factorizations import polar, qr, svd, svdvals  # noqa: E402

__all__ = ["solve", "eigh", "eigvalsh", "inv", "lstsq", "slogdet", "qr", "svd", "svdvals", "polar"]
