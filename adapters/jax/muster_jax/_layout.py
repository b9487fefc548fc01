"""The layout rules, from the runtime: which columns each device holds in the
block and the 1-D column block-cyclic layouts, and which tiles are valid.

Every answer comes from libmuster's muster_layout_* functions through
ctypes, so Python and C share one definition of each rule (muster/layout.h
writes them; docs/layout.md draws them).  Nothing here touches arrays.
"""
import ctypes

import numpy as np

from . import _lib


def calculate_all_valid_T_A(N: int, ndev: int, T_A_max: int | None = None) -> list[int]:
    """All tile sizes the runtime accepts for an N x N matrix on ndev devices.

    Args:
      N: order of the matrix.
      ndev: devices (ranks) it is spread over.
      T_A_max: if given, leave out the tiles larger than this.

    Returns:
      The valid tiles, ascending (the runtime's muster_layout_valid_tiles).

    Raises:
      ValueError: N or ndev out of range.
    """
    lib = _lib.runtime()
    cap = 1 << 16
    buf = (ctypes.c_int64 * cap)()
    cnt = _lib.check(lib.muster_layout_valid_tiles(int(N), int(ndev), buf, cap))
    if cnt > cap:
        buf = (ctypes.c_int64 * cnt)()
        cnt = _lib.check(lib.muster_layout_valid_tiles(int(N), int(ndev), buf, cnt))
    tiles = [int(buf[i]) for i in range(cnt)]
    if T_A_max is not None:
        tiles = [t for t in tiles if t <= T_A_max]
    return tiles


def check_T_A(N: int, T_A: int, ndev: int) -> None:
    """Check a tile for an N x N matrix on ndev devices.

    Args:
      N: order of the matrix.
      T_A: the tile to check.
      ndev: devices (ranks) the matrix is spread over.

    Raises:
      ValueError: T_A is not valid; the message names the nearest valid
        tiles (the runtime's muster_layout_check_tile).
    """
    if int(T_A) < 1:
        raise ValueError(f"T_A must be >= 1, got {T_A}")
    _lib.check(_lib.runtime().muster_layout_check_tile(int(N), int(T_A), int(ndev)))


def local_cols(N: int, T_A: int, ndev: int) -> int:
    """Padded column count of one device's shard in the cyclic layout.

    Args:
      N: order of the matrix.
      T_A: the tile of the cyclic layout (any T_A >= 1).
      ndev: devices (ranks) the matrix is spread over.

    Returns:
      The width every device's cyclic buffer has, padding included.

    Raises:
      ValueError: N, T_A or ndev out of range.
    """
    return int(_lib.check(_lib.runtime().muster_layout_local_cols(int(N), int(T_A), int(ndev))))


def block_cols(N: int, ndev: int, rank: int) -> tuple[int, int]:
    """The columns device `rank` holds in the block layout.

    Args:
      N: order of the matrix.
      ndev: devices (ranks) it is spread over.
      rank: the device's position along the mesh axis.

    Returns:
      (col0, ncols): it holds columns [col0, col0 + ncols); the last ranks
      may hold fewer than the others, or none.
    """
    col0, ncols = ctypes.c_int64(), ctypes.c_int64()
    _lib.check(_lib.runtime().muster_layout_block_cols(int(N), int(ndev), int(rank),
                                                       ctypes.byref(col0), ctypes.byref(ncols)))
    return col0.value, ncols.value


def block_padded_order(N: int, ndev: int) -> int:
    """The order A is padded to for the block layout.

    Every device's buffer is as wide as the widest block (rank 0's), so the
    padded matrix is ndev such blocks wide.

    Args:
      N: order of the matrix.
      ndev: devices (ranks) it is spread over.

    Returns:
      ndev times the block width, >= N.
    """
    return int(ndev) * block_cols(N, ndev, 0)[1]


def cyclic_cols(N: int, T_A: int, ndev: int, rank: int) -> np.ndarray:
    """What each local column of device `rank`'s cyclic buffer holds.

    Args:
      N: order of the matrix.
      T_A: the tile of the cyclic layout.
      ndev: devices (ranks) it is spread over.
      rank: the device's position along the mesh axis.

    Returns:
      int64[local_cols(N, T_A, ndev)]: the global column of each local
      column, -1 for a padding column.
    """
    lc = local_cols(N, T_A, ndev)
    out = np.empty(lc, dtype=np.int64)
    ptr = out.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
    _lib.check(_lib.runtime().muster_layout_cyclic_cols(int(N), int(T_A), int(ndev), int(rank), ptr, lc))
    return out


def cyclic_index(N: int, T_A: int, ndev: int) -> np.ndarray:
    """The global column of each column of the cyclic global array (the
    ndev cyclic buffers side by side), -1 for padding.

    Args:
      N: order of the matrix.
      T_A: the tile of the cyclic layout.
      ndev: devices (ranks) it is spread over.

    Returns:
      int64[ndev * local_cols(N, T_A, ndev)].
    """
    return np.concatenate([cyclic_cols(N, T_A, ndev, r) for r in range(int(ndev))])
