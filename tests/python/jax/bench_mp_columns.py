"""The engines the multi-process benchmark times (bench_mp_gpu.py), one
class per way of calling them, in one process of a jax.distributed job.

Each column, for one row (routine, m, n): fresh() makes this process's inputs
(untimed; A is donated to every call, as jaxmg's calls donate theirs by
default, so each call gets a fresh one), call(*inputs) is the timed call,
pieces(out) says where this process's parts of the result lie, chose()
which engine ran.

  store    muster_jax.distributed.solve inside jax.jit (the store path:
           jax.distributed's key-value store, a collective engine),
           this process's column block, or with grid=True its block of
           the 2-D mesh (P("pr", "pc"), grid=; potrs, getrs, syevd);
           provider forced or, None, the runtime's choice (then one eager
           call first tells which engine it chose: StoreSet.last)
  onenode  muster_jax.potrs / lu_solve / syevd / linalg.svd (thin) /
           linalg.polar on a mesh of every process's device (the
           one-node path: CUDA IPC on GPUs, shared memory on the CPU), A
           column-sharded; provider forced or None
  jaxmg    jaxmg 1.4.x's potrs / lu_solve / syevd / gesvd / polar (its
           README's forms) on the same 2-D mesh as the grid column, tile T_A

gesvd and polar (FACTORS) take an m x n A (m >= n here) and return
factors: thin (U, S, V^H) and (U_p, H).
"""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import bench_mp_matrix as mx
from bench_mp_gpu import FACTORS

KIND = {"potrs": "spd", "syevd": "spd", "getrs": "gen", "gesvd": "rand", "polar": "rand"}


class Ctx:
    """This process's place: its rank, the store set, its device, the 1-D
    mesh of every process's device (in process order) and the 2-D one."""

    def __init__(self, me: int, nproc: int, store, grid_shape):
        self.me, self.nproc, self.store = me, nproc, store
        self.device = jax.local_devices()[0]
        devs = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
        self.mesh1 = Mesh(np.array(devs), ("x",))
        self.grid_shape = tuple(grid_shape)
        self.mesh2 = Mesh(np.array(devs).reshape(self.grid_shape), ("pr", "pc"))
        self.procs = [d.process_index for d in self.mesh2.devices.flat]


class Row:
    def __init__(self, routine: str, n: int, nrhs: int, seed: int, m: int | None = None):
        self.routine, self.n, self.nrhs, self.seed, self.kind = routine, n, nrhs, seed, KIND[routine]
        self.m = n if m is None else m  # A's rows (gesvd, polar: m x n)
        self.factors = routine in FACTORS

    def b(self, ctx, r0=0, rows=None):
        return mx.rhs(self.n, self.nrhs, self.seed, r0, self.n if rows is None else rows, ctx.device)


def _shards(arr):
    """(row slice, column slice, data) of an array's addressable shards; a
    vector as one column."""
    out = []
    for sh in arr.addressable_shards:
        idx, data = sh.index, sh.data
        if arr.ndim == 1:
            out.append((idx[0], slice(0, 1), data[:, None]))
        else:
            out.append((idx[0], idx[1], data))
    return out


def _global(ctx, mesh, spec, shape, local):
    return jax.make_array_from_single_device_arrays(shape, NamedSharding(mesh, spec), [local])


class StoreColumn:
    def __init__(self, ctx, row, provider, grid: bool):
        import muster_jax.distributed as md
        self.ctx, self.row, self.provider, self.md = ctx, row, provider, md
        n = row.n
        if grid:
            self.grid = md.mesh_grid(("pr", "pc"), ctx.grid_shape, ctx.procs, ("pr", "pc"), n)
            (self.r0, self.nr), (self.c0, self.nc) = (self.grid["procs"][ctx.me][k] for k in ("rows", "cols"))
        else:
            self.grid, k = None, -(-n // ctx.nproc)
            self.r0, self.nr, self.c0 = 0, row.m, k * ctx.me
            self.nc = max(0, min(n, self.c0 + k) - self.c0)
        kw = dict(n=n, store=ctx.store, provider=provider, grid=self.grid)
        if row.factors:
            self.eager = lambda a: md.solve(row.routine, a, m=row.m, **kw)
        elif row.routine == "syevd":
            self.eager = lambda a: md.solve("syevd", a, **kw)
        else:
            self.eager = lambda a, b: md.solve(row.routine, a, b, **kw)
        self.call = jax.jit(self.eager, donate_argnums=0)
        self.last = None

    def fresh(self):
        a = mx.block(self.row.kind, self.row.n, self.row.seed, self.r0, self.c0, self.nr, self.nc, self.ctx.device)
        return (a,) if self.row.routine in ("syevd",) + FACTORS else (a, self.row.b(self.ctx))

    def probe(self):
        """One eager call: which engine the runtime chose, and the engine's
        own seconds (StoreSet.last; jitted calls do not set it)."""
        jax.block_until_ready(self.eager(*self.fresh()))
        self.last = dict(self.ctx.store.last)

    def pieces(self, out):
        n = self.row.n
        if self.row.factors:  # the factor shaped like A is this process's piece, cut as A; the others whole
            return factor_pieces(self.row, out, lambda x, rows, cols: [self._piece(x, rows, cols)])
        if self.row.routine == "syevd":
            w, v = out
            return dict(w=[(slice(0, n), slice(0, 1), w[:, None])],
                        v=[(slice(self.r0, self.r0 + self.nr), slice(self.c0, self.c0 + self.nc), v)])
        return dict(x=[(slice(0, n), slice(0, self.row.nrhs), out)])

    def _piece(self, x, rows, cols):
        """x whole (its shape rows x cols) or this process's piece of it."""
        if tuple(x.shape) == (rows, cols):
            return slice(0, rows), slice(0, cols), x
        return slice(self.r0, self.r0 + self.nr), slice(self.c0, self.c0 + self.nc), x

    def chose(self):
        if self.last:
            return dict(provider=self.last["provider"], reason=self.last["reason"], tile=self.last["tile"],
                        engine_seconds=self.last["seconds"])
        return dict(provider=self.provider, reason="forced (provider=)", tile=None)


class OneNodeColumn:
    def __init__(self, ctx, row, provider):
        import muster_jax as mj
        self.ctx, self.row, self.provider, self.mj = ctx, row, provider, mj
        m, cols = ctx.mesh1, P(None, "x")
        if row.routine == "gesvd":
            f = lambda a: tuple(mj.linalg.svd(a, full_matrices=False, mesh=m, provider=provider))  # noqa: E731
        elif row.routine == "polar":
            f = lambda a: mj.linalg.polar(a, mesh=m, provider=provider)  # noqa: E731
        elif row.routine == "syevd":
            f = lambda a: mj.syevd(a, mesh=m, in_specs=cols, provider=provider)  # noqa: E731
        else:
            call = mj.potrs if row.routine == "potrs" else mj.lu_solve
            f = lambda a, b: call(a, b, mesh=m, in_specs=(cols, P(None, None)), provider=provider)  # noqa: E731
        self.call = jax.jit(f, donate_argnums=0)

    def fresh(self):
        n, ctx = self.row.n, self.ctx
        if n % ctx.nproc:
            raise ValueError(f"n={n} is not divisible by {ctx.nproc} processes (a jax sharding needs it)")
        k, m = n // ctx.nproc, self.row.m
        a = _global(ctx, ctx.mesh1, P(None, "x"), (m, n),
                    mx.block(self.row.kind, n, self.row.seed, 0, k * ctx.me, m, k, ctx.device))
        if self.row.routine in ("syevd",) + FACTORS:
            return (a,)
        return a, _global(ctx, ctx.mesh1, P(None, None), (n, self.row.nrhs), self.row.b(ctx))

    def pieces(self, out):
        if self.row.factors:
            return factor_pieces(self.row, out)
        if self.row.routine == "syevd":
            return dict(w=_shards(out[0]), v=_shards(out[1]))
        return dict(x=_shards(out))

    def chose(self):
        """The engine of the last solve, as the process holding its rank 0
        measured it (muster_jax.last_solve), told to every process: its
        name, its own seconds (engine_seconds) and those of the whole
        muster_solve_named (solve_seconds: join, solve, leave), so that the
        call's time less these is the adapter's (staging, XLA)."""
        mine = self.mj.last_solve()
        name = (mine["provider"] or "").encode()[:32].ljust(32, b"\0")
        secs = np.array([mine["provider_s"], mine["solve_s"]] if mine["provider"] else [0.0, 0.0], np.float64)
        got = [(v[:32].rstrip(b"\0").decode(), np.frombuffer(v[32:], np.float64))
               for v in self.ctx.store.allgather(name + secs.tobytes())]
        lead = next((g for g in got if g[0]), ("?", np.zeros(2)))
        return dict(provider=lead[0], reason="forced (provider=)" if self.provider else "the one-node choice",
                    tile=mine["tile"] if mine["provider"] else None, engine_seconds=float(lead[1][0]),
                    solve_seconds=float(lead[1][1]))


class JaxmgColumn:
    def __init__(self, ctx, row, tile: int):
        import jaxmg
        self.ctx, self.row, self.tile, self.version = ctx, row, tile, jaxmg.__version__
        if row.routine in FACTORS:  # gesvd: thin (U, s, Vh), as its default full_matrices=False
            self.call = lambda a: getattr(jaxmg, row.routine)(a, T_A=tile)
        elif row.routine == "syevd":
            self.call = lambda a: jaxmg.syevd(a, T_A=tile)
        else:
            solve = jaxmg.potrs if row.routine == "potrs" else jaxmg.lu_solve
            self.call = lambda a, b: solve(a, b, T_A=tile)
        pr, pc = ctx.grid_shape
        if row.m % pr or row.n % pc or row.n % pr:
            raise ValueError(f"{row.m} x {row.n} is not divisible by the {pr} x {pc} mesh (a jax sharding needs it)")
        i, j = divmod(list(ctx.mesh2.devices.flat).index(ctx.device), pc)
        self.rows, self.cols = (i * (row.m // pr), row.m // pr), (j * (row.n // pc), row.n // pc)

    def fresh(self):
        n, ctx, (r0, nr), (c0, nc) = self.row.n, self.ctx, self.rows, self.cols
        a = _global(ctx, ctx.mesh2, P("pr", "pc"), (self.row.m, n),
                    mx.block(self.row.kind, n, self.row.seed, r0, c0, nr, nc, ctx.device))
        if self.row.routine in ("syevd",) + FACTORS:
            return (a,)
        return a, _global(ctx, ctx.mesh2, P("pr", None), (n, self.row.nrhs), self.row.b(ctx, r0, nr))

    def pieces(self, out):
        if self.row.factors:
            return factor_pieces(self.row, out)
        if self.row.routine == "syevd":
            return dict(w=_shards(out[0]), v=_shards(out[1]))
        return dict(x=_shards(out))

    def chose(self):
        return dict(provider="jaxmg", reason=f"jaxmg {self.version}, T_A={self.tile}", tile=self.tile)


def factor_pieces(row, out, mat=None) -> dict:
    """The pieces of gesvd's (U, S, V^H) or polar's (U_p, H), whichever
    engine returned them: by default every output a jax array, its
    addressable shards; else mat(x, rows, cols) gives those of a rows x
    cols factor, and S is whole on every process (a store solve's W)."""
    m, n = row.m, row.n
    k = min(m, n)
    if mat is None:
        mat, vec = (lambda x, rows, cols: _shards(x)), _shards
    else:
        vec = lambda s: [(slice(0, k), slice(0, 1), s[:, None])]  # noqa: E731
    if row.routine == "gesvd":
        u, s, vh = out
        return dict(u=mat(u, m, k), s=vec(s), vh=mat(vh, k, n))
    up, h = out
    return dict(up=mat(up, m, n), h=mat(h, n, n))


def make(name: str, ctx, row, opts: dict):
    """The column `name` (bench_mp_gpu.COLUMNS) for this row."""
    if name in ("mp", "mp_grid"):
        return StoreColumn(ctx, row, opts["mp_provider"], grid=name == "mp_grid")
    if name == "default":
        return StoreColumn(ctx, row, None, grid=False)
    if name in ("onenode", "mg", "dn"):
        return OneNodeColumn(ctx, row, {"onenode": None, "mg": "cusolvermg", "dn": "cusolverdn"}[name])
    if name == "jaxmg":
        return JaxmgColumn(ctx, row, opts["jaxmg_tile"])
    raise ValueError(f"unknown column {name!r}")


def check(col, out) -> dict:
    """The column's result checked (bench_mp_matrix): {"resid", "ok"}."""
    ctx, row, pieces = col.ctx, col.row, col.pieces(out)
    if row.routine == "gesvd":
        return mx.check_svd(ctx.store, row.kind, row.m, row.n, row.seed, pieces["u"], pieces["s"], pieces["vh"],
                            ctx.me, ctx.nproc, ctx.device)
    if row.routine == "polar":
        return mx.check_polar(ctx.store, row.kind, row.m, row.n, row.seed, pieces["up"], pieces["h"], ctx.me,
                              ctx.nproc, ctx.device)
    if row.routine == "syevd":
        return mx.check_eig(ctx.store, row.n, row.seed, pieces["w"], pieces["v"], ctx.me, ctx.nproc, ctx.device)
    return mx.check_solve(ctx.store, row.kind, row.n, row.seed, row.nrhs, pieces["x"], ctx.me, ctx.nproc,
                          ctx.device)
