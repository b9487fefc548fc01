"""jaxmg 0.0.x's row-cyclic helpers (jaxmg 0.0.9's cyclic_1d, pad_rows,
unpad_rows, get_cols_cyclic, verify_cyclic).

jaxmg 0.0.x holds A row-sharded, P("x", None), and its cuSolverMg sees the
row-major shards as column-major: a row of A here is a column there.  Its
1-D cyclic layout gives device d the rows of tiles d, d + ndev, ... (tile k
is rows k*T_A .. k*T_A + T_A - 1) one after another, in a buffer of
N_batch = S + calculate_padding(S, T_A) rows per device, S = N / ndev;
rows not filled are zero.  muster's own solves relayout in the runtime;
these are for code that calls jaxmg's helpers (muster's column form:
muster_jax.cyclic_1d_layout).
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from .. import _sharding
from .._cyclic import mesh_and_axis


def calculate_padding(shard_size: int, T_A: int) -> int:
    """Rows to add to a shard of shard_size rows for a multiple of T_A
    (jaxmg's calculate_padding)."""
    return (-int(shard_size)) % int(T_A)


def _destinations(N: int, N_batch: int, T_A: int, ndev: int) -> np.ndarray:
    """Row of the cyclic form that row i of A goes to, for every i."""
    i = np.arange(N)
    k = i // T_A
    return (k % ndev) * N_batch + (k // ndev) * T_A + i % T_A


def get_cols_cyclic(N: int, N_batch: int, T_A: int, num_devices: int) -> list[tuple[int, int, int]]:
    """Where each row ("column" to cuSolverMg) of A goes (jaxmg's
    get_cols_cyclic(N, N_batch, T_A, num_devices)).

    Args:
      N: order of A.
      N_batch: rows of one device's buffer (padding included).
      T_A: the tile.
      num_devices: devices.

    Returns:
      [(i, src, dst)] for i in 0..N-1: src is row i's row in the padded
      block layout (device i // S's buffer of N_batch rows), dst its row
      in the cyclic form.

    Raises:
      ValueError: N smaller than num_devices, or a nonpositive size.
    """
    N, N_batch, T_A, R = int(N), int(N_batch), int(T_A), int(num_devices)
    if min(T_A, R) < 1 or N < R:
        raise ValueError(f"get_cols_cyclic: need T_A >= 1 and N >= num_devices >= 1 (N={N}, T_A={T_A}, "
                         f"num_devices={R})")
    S = N // R
    i = np.arange(N)
    src = i + (N_batch - S) * (i // S)
    dst = _destinations(N, N_batch, T_A, R)
    return [(int(a), int(b), int(c)) for a, b, c in zip(i, src, dst)]


def _rows_needed(N: int, T_A: int, ndev: int) -> int:
    """Most rows any device holds in the cyclic layout (device 0's)."""
    sizes = np.minimum(T_A, N - np.arange(0, N, T_A))
    return int(sizes[::ndev].sum())


def _fitting_tiles(N: int, ndev: int, S: int, near: int) -> list[int]:
    ok = [t for t in range(1, N + 1)
          if _rows_needed(N, t, ndev) <= (S + calculate_padding(S, t) if t < S else S)]
    return sorted(ok, key=lambda t: abs(t - near))[:4]


def _spec(in_specs) -> P:
    if isinstance(in_specs, (list, tuple)) and not isinstance(in_specs, P):
        if len(in_specs) != 1:
            raise ValueError("cyclic_1d: in_specs must be a single PartitionSpec or a 1-element list/tuple")
        in_specs = in_specs[0]
    if not isinstance(in_specs, P):
        raise TypeError("cyclic_1d: in_specs must be a PartitionSpec or a 1-element list/tuple holding one")
    parts = tuple(in_specs) + (None,) * (2 - len(tuple(in_specs)))
    if parts[0] is None or parts[1] is not None:
        raise ValueError(f"cyclic_1d: A must be row-sharded, P(axis, None); got {in_specs}")
    return P(parts[0], None)


def cyclic_1d(a: jax.Array, T_A: int, mesh: Mesh | None, in_specs, pad: bool = True) -> jax.Array:
    """A's rows in jaxmg's 1-D cyclic layout (jaxmg 0.0.9:
    cyclic_1d(a, T_A, mesh, in_specs, pad=True)).

    Args:
      a: A, N x N row-sharded (or its (ndev*N_batch) x N form with each
        shard's padding rows already added, pad_rows).
      T_A: the tile.
      mesh: the mesh (None: a's own, else the context's).
      in_specs: a's spec, P(axis, None), or a 1-element list/tuple of it.
      pad: add the rows each shard needs (jaxmg's default); False: they
        must be there already.

    Returns:
      The (ndev*N_batch) x N cyclic form, sharded P(axis, None): shard d
      holds the rows of tiles d, d + ndev, ..., then zero rows.  a is not
      donated (jaxmg's is).

    Raises:
      ValueError: a spec other than P(axis, None), N not a multiple of the
        devices, rows missing with pad=False, or a tile whose rows do not
        fit one device's buffer (the message names tiles that do).
      TypeError: in_specs not a PartitionSpec.
    """
    spec = _spec(in_specs)
    if getattr(a, "ndim", None) != 2:
        raise ValueError(f"cyclic_1d: a must be 2-D, got shape {getattr(a, 'shape', None)}")
    mesh, axis = mesh_and_axis(a, mesh, spec[0], "cyclic_1d")
    R = _sharding.axis_size(mesh, axis, "cyclic_1d")
    T_A = int(T_A)
    N_rows, N = map(int, a.shape)
    if T_A < 1 or N % R or N_rows % R or N_rows < N:
        raise ValueError(f"cyclic_1d: needs T_A >= 1 and N, rows multiples of the {R} devices along "
                         f"{axis!r} (a is {N_rows} x {N}, T_A={T_A})")
    S, L = N // R, N_rows // R
    need = calculate_padding(L, T_A) if T_A < S else 0
    if need and not pad:
        raise ValueError(f"cyclic_1d: pad=False, but each shard's {L} rows are not a multiple of T_A={T_A}: "
                         f"add {need} rows to each (pad_rows) or pass pad=True")
    N_batch = L + need
    if _rows_needed(N, T_A, R) > N_batch:
        raise ValueError(f"cyclic_1d: T_A={T_A} does not fit N={N} on {R} devices (device 0 would hold "
                         f"{_rows_needed(N, T_A, R)} rows of {N_batch}); tiles that fit: "
                         f"{_fitting_tiles(N, R, S, T_A)}")
    src = np.arange(N) + (L - S) * (np.arange(N) // S)
    idx = np.full(R * N_batch, -1, dtype=np.int64)
    idx[_destinations(N, N_batch, T_A, R)] = src
    with _sharding.in_mesh(mesh, _sharding.is_traced(a)):
        return _gather_rows(a, idx=tuple(int(i) for i in idx), mesh=mesh, spec=spec)


@partial(jax.jit, static_argnames=("idx", "mesh", "spec"))
def _gather_rows(a, *, idx, mesh, spec):
    """Rows idx of a (-1: a zero row), gathered from a replicated copy and
    placed as spec."""
    idx = np.asarray(idx)
    a = _sharding.constrain(a, mesh, P(None, None))
    rows = jnp.take(a, jnp.asarray(np.where(idx >= 0, idx, 0)), axis=0)
    out = jnp.where(jnp.asarray(idx >= 0)[:, None], rows, jnp.zeros((), a.dtype))
    return _sharding.constrain(out, mesh, spec)


def pad_rows(_a: jax.Array, padding: int) -> jax.Array:
    """padding zero rows below _a (jaxmg's pad_rows(_a, padding); used on
    each shard inside shard_map)."""
    return jnp.pad(_a, ((0, int(padding)), (0, 0)))


def unpad_rows(_a: jax.Array, padding: int) -> jax.Array:
    """_a without its last padding rows (jaxmg's unpad_rows(_a, padding));
    padding=0 leaves _a whole (jaxmg's gives no rows then)."""
    return _a[:_a.shape[0] - int(padding)]


def _row_devices(x) -> int | None:
    sh = getattr(x, "sharding", None)
    if isinstance(sh, NamedSharding) and len(sh.spec) and sh.spec[0] is not None:
        return _sharding.axis_size(sh.mesh, sh.spec[0], "verify_cyclic")
    return None


def verify_cyclic(A, A_cyclic, T_A: int, *, strict: bool = True) -> bool:
    """Whether A_cyclic is A in jaxmg's row-cyclic layout (jaxmg 0.0.9:
    verify_cyclic(A, A_cyclic, T_A), which asserts).

    The devices: those A_cyclic's rows are sharded over, else
    jax.device_count() (jaxmg's).  N_batch = S + calculate_padding(S, T_A).

    Args:
      A: A, N x N.
      A_cyclic: its cyclic form (cyclic_1d).
      T_A: the tile.
      strict: raise on a mismatch, as jaxmg does (False: return False).

    Returns:
      True when every row of A is where the layout puts it.

    Raises:
      AssertionError: a mismatch with strict (the message names the row).
    """
    R = _row_devices(A_cyclic) or jax.device_count()
    A, C = np.asarray(A), np.asarray(A_cyclic)
    N = A.shape[0]
    S = N // R
    N_batch = S + calculate_padding(S, T_A)
    problem = None
    if C.ndim != 2 or C.shape[0] < R * N_batch or C.shape[1] != A.shape[1]:
        problem = f"A_cyclic has shape {C.shape}, the layout needs ({R * N_batch}, {A.shape[1]})"
    else:
        dst = _destinations(N, N_batch, int(T_A), R)
        bad = [i for i in range(N) if not np.allclose(A[i], C[dst[i]])]
        if bad:
            problem = f"row {bad[0]} of A is not row {dst[bad[0]]} of A_cyclic ({len(bad)} rows differ)"
    if problem and strict:
        raise AssertionError(f"verify_cyclic (T_A={T_A}, {R} devices): {problem}")
    return problem is None
