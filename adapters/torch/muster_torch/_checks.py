"""What the Python side checks before the runtime sees a call: element
types (TypeError) and shapes (ValueError).  Pure shape logic, so the fake
(meta) implementations use it too and torch.compile reports the same errors
while tracing.  Everything that depends on several ranks (the block layout,
agreement of n and dtype across processes) is the runtime's to check."""
import torch

from ._buffers import DTYPES


def _name(routine):
    return f"muster_torch.{routine}"


def shards(routine: str, a, whole: bool, ncols: int | None = None) -> tuple[int, torch.dtype]:
    """Check the column blocks this process holds.

    Args:
      routine: "potrs", "getrs", ..., for messages.
      a: the list of column blocks (m x k_r tensors).
      whole: the list is every shard of A (one process holds them all), so
        their widths must add up to A's columns.
      ncols: gels: A's columns n (A is m x n, m >= n); None: A is square
        (n = m, its rows).

    Returns:
      (m, dtype): A's rows and element type.

    Raises:
      TypeError: not tensors, an unsupported dtype, or mixed dtypes.
      ValueError: no shard, not matrices, different row counts, widths that
        do not add up to n, shards on both CPU and CUDA.
    """
    who = _name(routine)
    if len(a) == 0:
        raise ValueError(f"{who}: no shard given")
    for i, t in enumerate(a):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{who}: shard {i} is a {type(t).__name__}, not a torch.Tensor")
    dtype = a[0].dtype
    if dtype not in DTYPES:
        raise TypeError(f"{who}: dtype {dtype} not supported (float32, float64, complex64, "
                        "complex128)")
    for i, t in enumerate(a):
        if t.dtype != dtype:
            raise TypeError(f"{who}: shard {i} is {t.dtype}, shard 0 is {dtype}")
        if t.dim() != 2:
            raise ValueError(f"{who}: shard {i} has shape {tuple(t.shape)}: each shard is a "
                             "2-D column block (n x k)")
    m = a[0].shape[0]
    n = m if ncols is None else ncols
    if m < 1 or n < 1:
        raise ValueError(f"{who}: A is {m} x {n}: no rows or no columns")
    if m < n:
        raise ValueError(f"{who}: A is {m} x {n}, wider than tall: least squares needs "
                         "m >= n (full column rank)")
    for i, t in enumerate(a):
        if t.shape[0] != m:
            raise ValueError(f"{who}: shard {i} has {t.shape[0]} rows, shard 0 has {m}")
    if whole and sum(t.shape[1] for t in a) != n:
        what = f"A has {n} rows" if ncols is None else f"A has {n} columns"
        raise ValueError(f"{who}: the shards hold {sum(t.shape[1] for t in a)} columns, "
                         f"{what}: they must hold its n columns, in order")
    if len({t.device.type for t in a}) > 1:
        raise ValueError(f"{who}: shards on {sorted({str(t.device) for t in a})}: all on the "
                         "CPU or all on CUDA devices")
    return m, dtype


def rhs(routine: str, b, m: int, n: int, dtype: torch.dtype) -> int:
    """Check the right-hand side of potrs, getrs (m = n) or gels (A m x n,
    B m x nrhs); returns nrhs."""
    who = _name(routine)
    if not isinstance(b, torch.Tensor):
        raise TypeError(f"{who}: b is a {type(b).__name__}, not a torch.Tensor")
    if b.dtype != dtype:
        raise TypeError(f"{who}: b is {b.dtype}, A is {dtype}")
    if b.dim() not in (1, 2) or b.shape[0] != m:
        raise ValueError(f"{who}: b has shape {tuple(b.shape)}, A is {m} x {n}: "
                         f"b must be ({m},) or ({m}, nrhs): A's rows")
    nrhs = 1 if b.dim() == 1 else b.shape[1]
    if nrhs < 1:
        raise ValueError(f"{who}: b has no column")
    return nrhs


def process_args(routine: str, a, group: str, rank: int, nranks: int) -> None:
    """One rank per process: exactly one shard, a rank within the group."""
    if group and len(a) != 1:
        raise ValueError(f"{_name(routine)}: one rank per process passes its own shard "
                         f"only, got {len(a)}")
    if group and not 0 <= rank < nranks:
        raise ValueError(f"{_name(routine)}: rank {rank} not in [0, {nranks})")
