"""jaxmg 0.0.x's plot_block_to_cyclic: a picture of which device holds
each column, in the block layout and in the 1-D cyclic one (matplotlib,
needed only here)."""
import numpy as np

from ._cyclic_rows import calculate_padding


def ownership(N: int, T_A: int, ndev: int) -> tuple[np.ndarray, np.ndarray]:
    """The two rows of labels plot_block_to_cyclic draws, device ids and
    ndev for padding, over ndev*(S + pad) columns (S = N // ndev, pad =
    calculate_padding(S, T_A)).

    Returns:
      (before, after): before, device d's S columns followed by its pad
      columns; after, the N global columns by tile (tile k on device
      k % ndev), then the padding.

    Raises:
      ValueError: N // ndev, T_A or ndev below 1.
    """
    S = N // ndev if ndev >= 1 else 0
    if S < 1 or T_A < 1:
        raise ValueError(f"plot_block_to_cyclic: N // ndev, T_A and ndev must be >= 1 (N={N}, T_A={T_A}, "
                         f"ndev={ndev})")
    pad = calculate_padding(S, T_A)
    width = ndev * (S + pad)
    col = np.arange(width)
    before = np.where(col % (S + pad) < S, col // (S + pad), ndev)
    after = np.where(col < ndev * S, (col // T_A) % ndev, ndev)
    return before, after


def plot_block_to_cyclic(N: int, T_A: int, ndev: int, N_rows: int = 8):
    """Draw the column ownership before and after the block-to-cyclic
    relayout (jaxmg 0.0.9: plot_block_to_cyclic(N, T_A, ndev, N_rows=8)).

    Args:
      N: order of the matrix.
      T_A: the tile.
      ndev: devices.
      N_rows: rows drawn (the picture repeats down the rows).

    Returns:
      (fig, axs): the matplotlib Figure and its two Axes, axs[0] the block
      layout and axs[1] the cyclic one (images of `ownership`'s labels).

    Raises:
      ImportError: matplotlib is not installed (pip install matplotlib).
      ValueError: as ownership.
    """
    try:
        import matplotlib.pyplot as plt
        from matplotlib.colors import BoundaryNorm, ListedColormap
        from matplotlib.patches import Patch
    except ImportError as e:
        raise ImportError("muster_jax.jaxmg plot_block_to_cyclic needs matplotlib "
                          "(pip install matplotlib); the layout itself is ownership(N, T_A, ndev)") from e
    before, after = ownership(int(N), int(T_A), int(ndev))
    colors = [plt.get_cmap("tab20")(d % 20) for d in range(ndev)] + [(0.85, 0.85, 0.85, 1.0)]
    cmap, norm = ListedColormap(colors), BoundaryNorm(np.arange(ndev + 2), ndev + 1)
    fig, axs = plt.subplots(2, 1, figsize=(8, 6), constrained_layout=True)
    S, pad = N // ndev, calculate_padding(N // ndev, T_A)
    titles = (f"block layout: {S} columns a device, {pad} padding each",
              f"1-D block-cyclic, tile T_A={T_A}")
    for ax, labels, title in zip(axs, (before, after), titles):
        ax.imshow(np.tile(labels, (int(N_rows), 1)), aspect="auto", interpolation="nearest", cmap=cmap,
                  norm=norm)
        ax.set_title(title)
        ax.set_xlabel("columns")
        ax.set_yticks([])
    axs[1].legend(handles=[Patch(facecolor=colors[d], edgecolor="k", label=f"device {d}") for d in range(ndev)]
                  + [Patch(facecolor=colors[-1], edgecolor="k", label="padding")], loc="upper right")
    fig.suptitle(f"N={N}, ndev={ndev}")
    return fig, axs
