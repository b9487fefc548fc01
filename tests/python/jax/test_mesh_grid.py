"""muster_jax.distributed.mesh_grid (adapters/common/grid.py): a device mesh
and a spec of A as the process grid of the collective engines (cuSOLVERMp),
checked by hand on 1-D and 2-D meshes and against a brute-force model on
random ones; piece_dist: each process's piece as the 2-D block-cyclic
layout (muster_dist_t) the engines take, against ScaLAPACK's rules."""
import itertools
import math
import random

import pytest

from muster_jax.distributed import mesh_grid, piece_dist


def test_one_d_columns_is_the_block_layout():
    g = mesh_grid(("x",), (4,), [0, 1, 2, 3], (None, "x"), 10)
    assert (g["nprow"], g["npcol"], g["mb"], g["nb"], g["layout"]) == (1, 4, 10, 3, "block")
    for p in range(4):
        e = g["procs"][p]
        assert e["rank"] == e["mp_rank"] == p
        assert e["rows"] == (0, 10) and e["cols"] == (3 * p, min(3, 10 - 3 * p))


def test_two_d_mesh_ranks_both_ways():
    # jaxmg 1.4.x's form: rows over pr, columns over pc; n = 7 does not divide
    g = mesh_grid(("pr", "pc"), (2, 2), [0, 1, 2, 3], ("pr", "pc"), 7)
    assert (g["nprow"], g["npcol"], g["mb"], g["nb"], g["layout"]) == (2, 2, 4, 4, "block2d")
    e = g["procs"][1]  # mesh position (pr 0, pc 1)
    assert (e["row"], e["col"], e["rank"], e["mp_rank"]) == (0, 1, 1, 2)
    assert e["rows"] == (0, 4) and e["cols"] == (4, 3)
    e = g["procs"][2]  # (pr 1, pc 0)
    assert (e["row"], e["col"], e["rank"], e["mp_rank"]) == (1, 0, 2, 1)
    assert e["rows"] == (4, 3)
    # the spec transposed: rows over pc
    t = mesh_grid(("pr", "pc"), (2, 2), [0, 1, 2, 3], ("pc", "pr"), 7)
    assert (t["procs"][1]["row"], t["procs"][1]["col"]) == (1, 0)


def test_processes_in_any_mesh_order_and_axis_tuples():
    g = mesh_grid(("x",), (3,), [2, 0, 1], (None, "x"), 9)
    assert [g["procs"][p]["rank"] for p in (2, 0, 1)] == [0, 1, 2]
    g = mesh_grid(("a", "b", "c"), (2, 2, 2), list(range(8)), (("a", "b"), "c"), 16)
    assert (g["nprow"], g["npcol"]) == (4, 2)
    assert g["procs"][6]["row"] == 3 and g["procs"][6]["col"] == 0  # a=1, b=1, c=0


@pytest.mark.parametrize("names,sizes,procs,spec,n,words", [
    (("x",), (2,), [0, 1], (None, "y"), 8, "'y' is not an axis"),
    (("x", "y"), (2, 2), [0, 1, 2, 3], ("x", "x"), 8, "named twice"),
    (("x", "y"), (2, 2), [0, 1, 2, 3], (None, "x"), 8, "leaves out mesh axis 'y' of size 2"),
    (("x",), (2,), [0, 0], (None, "x"), 8, "process 0 holds several positions"),
    (("x",), (4,), [0, 1, 2, 3], ("x", None), 3, "leaves a grid row or column without a block"),
    (("x",), (2,), [0, 1], ("x",), 8, "one entry per dimension"),
])
def test_refusals(names, sizes, procs, spec, n, words):
    with pytest.raises(ValueError, match=words):
        mesh_grid(names, sizes, procs, spec, n)


def test_random_meshes_against_a_model():
    rnd = random.Random(20261126)
    for _ in range(200):
        k = rnd.randint(1, 3)
        names = tuple("abc"[:k])
        sizes = tuple(rnd.randint(1, 3) for _ in names)
        procs = list(range(math.prod(sizes)))
        rnd.shuffle(procs)
        axes = list(names)
        rnd.shuffle(axes)
        cut = rnd.randint(0, k)
        rows, cols = tuple(axes[:cut]), tuple(axes[cut:])
        nprow, npcol = math.prod(sizes[names.index(a)] for a in rows), math.prod(sizes[names.index(a)] for a in cols)
        n = rnd.randint(max(nprow, npcol), 40)
        spec = (rows or None, cols or None)
        if any((p - 1) * -(-n // p) >= n for p in (nprow, npcol)):  # a grid line with no block
            with pytest.raises(ValueError, match="without a block"):
                mesh_grid(names, sizes, procs, spec, n)
            continue
        g = mesh_grid(names, sizes, procs, spec, n)
        assert (g["nprow"], g["npcol"]) == (nprow, npcol)
        seen = set()
        for flat, coord in enumerate(itertools.product(*[range(s) for s in sizes])):
            e = g["procs"][procs[flat]]
            at = dict(zip(names, coord))
            r = c = 0
            for a in rows:
                r = r * sizes[names.index(a)] + at[a]
            for a in cols:
                c = c * sizes[names.index(a)] + at[a]
            assert (e["row"], e["col"]) == (r, c)
            assert e["rank"] == r * npcol + c and e["mp_rank"] == r + c * nprow
            seen.add(e["rank"])
        assert seen == set(range(nprow * npcol))
        # the pieces tile A exactly
        assert sum(e["rows"][1] * e["cols"][1] for e in g["procs"].values()) == n * n
        for p, e in g["procs"].items():
            check_piece_dist(g, p, e, n)


def numroc(extent, block, coord, nprocs):
    """ScaLAPACK's NUMROC, source 0: the rows (columns) grid line coord holds."""
    nblocks = extent // block
    mine = nblocks // nprocs * block
    extra = nblocks % nprocs
    return mine + (block if coord < extra else extent % block if coord == extra else 0)


def check_piece_dist(g, p, e, n):
    """The piece of process p, as the mesh cuts A, is exactly its part of
    the block-cyclic layout piece_dist describes: as many rows and columns
    (NUMROC), and local (i, j) is global (first row + i, first col + j)."""
    d = piece_dist(g, p)
    assert (d["m"], d["n"], d["nprow"], d["npcol"]) == (n, n, g["nprow"], g["npcol"])
    assert d["myrow"] * d["npcol"] + d["mycol"] == e["rank"]
    assert numroc(n, d["mb"], d["myrow"], d["nprow"]) == e["rows"][1]
    assert numroc(n, d["nb"], d["mycol"], d["npcol"]) == e["cols"][1]
    assert d["lld"] == max(1, e["rows"][1])
    for li in range(e["rows"][1]):  # block-cyclic local -> global, as the engines read it
        assert (li // d["mb"] * d["nprow"] + d["myrow"]) * d["mb"] + li % d["mb"] == e["rows"][0] + li
    for lj in range(e["cols"][1]):
        assert (lj // d["nb"] * d["npcol"] + d["mycol"]) * d["nb"] + lj % d["nb"] == e["cols"][0] + lj


def test_piece_dist_of_a_two_d_mesh():
    g = mesh_grid(("pr", "pc"), (2, 2), [0, 1, 2, 3], ("pr", "pc"), 7)
    assert piece_dist(g, 2) == {"m": 7, "n": 7, "mb": 4, "nb": 4, "nprow": 2, "npcol": 2, "myrow": 1, "mycol": 0,
                                "lld": 3}
    for p, e in g["procs"].items():
        check_piece_dist(g, p, e, 7)
    with pytest.raises(ValueError, match="process 9 holds no position"):
        piece_dist(g, 9)

