"""A framework's device mesh as a process grid for the collective engines
(cuSOLVERMp, ScaLAPACK): which process holds which block of A, and its rank.

Linked into each adapter package as `_grid.py`.  Plain Python on names and
numbers (no framework imported), so every case is tested on the CPU
(tests/python/jax/test_mesh_grid.py).  docs/multinode.md.

The matrix A (n x n) is sharded over a mesh by a spec of two entries, one
per dimension of A, each None, a mesh axis name, or a tuple of names (as
jax's PartitionSpec): P("pr", "pc") puts A's rows over axis pr and its
columns over pc (jaxmg 1.4.x's 2-D form); P(None, "x") puts columns over x
(1-D, muster's block layout).  Dimension d's shards are ceil(n / k) rows or
columns each (k its number of shards), the last one shorter, which is how
the frameworks cut an uneven dimension.

The grid is nprow x npcol, nprow = the product of the row axes' sizes,
npcol = the columns'.  A mesh position's grid row is its coordinates on the
row axes read as one mixed-radix number (the first axis named is the most
significant), likewise its column.  Ranks:
  rank      row * npcol + col   muster_dist_t's numbering (row-major): the
                                rank each process takes in the
                                communicator, so its piece is the block
                                (row, col) of the caller's layout;
  mp_rank   row + col * nprow   cuSOLVERMp's (column-major, the only
                                mapping it takes); the two agree when nprow
                                or npcol is 1, else the provider's plan
                                redistributes (no gather).
"""
import math


def _axes(entry):
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def mesh_grid(axis_names, axis_sizes, device_procs, spec, n: int) -> dict:
    """The process grid of an n x n matrix sharded by `spec` over a mesh.

    Args:
      axis_names: the mesh's axis names, in its order ("pr", "pc").
      axis_sizes: their sizes.
      device_procs: the process index of each mesh position, flattened in
        row-major order of the mesh (jax: [d.process_index for d in
        mesh.devices.flat]).
      spec: (rows, cols) entries: None, an axis name or a tuple of names.
      n: A's order.

    Returns:
      {"n", "nprow", "npcol", "mb", "nb", "layout": "block" (1-D columns: muster's
      block layout) or "block2d", "procs": {process: {"rank", "mp_rank",
      "row", "col", "rows": (first, count), "cols": (first, count)}}}

    Raises:
      ValueError: an axis that is not the mesh's, one named twice, an axis
      of size > 1 the spec leaves out (it would replicate A: the engines
      take each entry once), a process holding several mesh positions (one
      process per GPU), or a grid with empty rows or columns of blocks.
    """
    names, sizes = tuple(axis_names), tuple(int(s) for s in axis_sizes)
    if len(names) != len(sizes) or len(device_procs) != math.prod(sizes):
        raise ValueError(f"mesh of axes {names} sizes {sizes} but {len(device_procs)} positions")
    if len(spec) != 2:
        raise ValueError(f"spec {spec!r}: one entry per dimension of A (2)")
    rows, cols = _axes(spec[0]), _axes(spec[1])
    for a in rows + cols:
        if a not in names:
            raise ValueError(f"spec {spec!r}: '{a}' is not an axis of the mesh {names}")
    if len(set(rows + cols)) != len(rows + cols):
        raise ValueError(f"spec {spec!r}: an axis is named twice")
    for a, s in zip(names, sizes):
        if s > 1 and a not in rows + cols:
            raise ValueError(f"spec {spec!r} leaves out mesh axis '{a}' of size {s}: A would be replicated "
                             f"over it, and the collective engines take each entry on one process only")
    size_of = dict(zip(names, sizes))
    nprow = math.prod(size_of[a] for a in rows)
    npcol = math.prod(size_of[a] for a in cols)
    mb, nb = -(-n // nprow), -(-n // npcol)
    if (nprow - 1) * mb >= n or (npcol - 1) * nb >= n:
        raise ValueError(f"n={n} over a {nprow} x {npcol} grid leaves a grid row or column without a block "
                         f"(blocks of {mb} x {nb})")
    procs = {}
    for flat, proc in enumerate(device_procs):
        coord, rest = {}, flat
        for a, s in reversed(tuple(zip(names, sizes))):
            coord[a], rest = rest % s, rest // s
        r = c = 0
        for a in rows:
            r = r * size_of[a] + coord[a]
        for a in cols:
            c = c * size_of[a] + coord[a]
        if proc in procs:
            raise ValueError(f"process {proc} holds several positions of the mesh: the collective engines run "
                             f"one process per GPU (a 1-D process mesh over every process's devices: use the "
                             f"one-node path)")
        procs[proc] = {"rank": r * npcol + c, "mp_rank": r + c * nprow, "row": r, "col": c,
                       "rows": (r * mb, min(mb, n - r * mb)), "cols": (c * nb, min(nb, n - c * nb))}
    return {"n": n, "nprow": nprow, "npcol": npcol, "mb": mb, "nb": nb,
            "layout": "block" if nprow == 1 else "block2d", "procs": procs}


def piece_dist(grid: dict, proc) -> dict:
    """muster_dist_t's fields (include/muster/layout.h) for the piece of
    process `proc` of a mesh_grid() result: the 2-D block-cyclic layout
    with one block of mb x nb per process, which is how the mesh cuts A
    (block (row, col) is rows row * mb ... and columns col * nb ..., each
    the last one shorter), so the engine takes the shards as they are
    (muster_solve_comm_dist).  lld: the piece's rows (a packed piece).

    Raises:
      ValueError: proc holds no position of the grid's mesh."""
    if proc not in grid["procs"]:
        raise ValueError(f"process {proc} holds no position of the mesh (its processes: "
                         f"{sorted(grid['procs'])})")
    e = grid["procs"][proc]
    return {"m": grid["n"], "n": grid["n"], "mb": grid["mb"], "nb": grid["nb"], "nprow": grid["nprow"],
            "npcol": grid["npcol"], "myrow": e["row"], "mycol": e["col"], "lld": max(1, e["rows"][1])}


def place(grid: dict, n: int, proc, set_rank: int, who: str) -> tuple:
    """(rows, cols, col0, dist) of process `proc`'s piece of a mesh_grid()
    result, for solve(..., grid=) of both adapters: a column block (1-D
    columns, layout "block": dist None, muster's block layout) or its 2-D
    block (dist: piece_dist's fields).  `set_rank`: its rank in the store
    set, which must be its grid rank (row * npcol + col: muster_dist_t's
    numbering, the rank the runtime takes its place for).

    Raises:
      ValueError (prefixed with `who`): a grid made for another n, a
      process with no place in it, a set rank that is not the grid rank."""
    if grid["n"] != n:
        raise ValueError(f"{who}: n={n}, the grid was made for n={grid['n']}")
    try:
        d = piece_dist(grid, proc)
    except ValueError as e:
        raise ValueError(f"{who}: {e}") from None
    rank = d["myrow"] * d["npcol"] + d["mycol"]
    if rank != set_rank:
        raise ValueError(f"{who}: this process ({proc} in the grid's processes) holds grid place "
                         f"({d['myrow']}, {d['mycol']}), rank {rank} of the grid, but is rank {set_rank} of "
                         f"the store set: open it with store_set(rank={rank})")
    e = grid["procs"][proc]
    if grid["layout"] == "block":
        return n, e["cols"][1], e["cols"][0], None
    return e["rows"][1], e["cols"][1], 0, d


def check_shape(what: str, shape, want: tuple, who: str, where: str = ""):
    """ValueError unless `shape` (an array's) is `want`: a piece of the
    wrong shape would otherwise be reshaped into the right number of
    elements, or fail deep in the framework with no word of the grid."""
    if tuple(int(s) for s in shape) != tuple(want):
        got = " x ".join(str(int(s)) for s in shape) or "a scalar"
        raise ValueError(f"{who}: {what} is {got}, it must be {' x '.join(map(str, want))}{where}")
