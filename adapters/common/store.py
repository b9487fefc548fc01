"""The store bootstrap (include/muster/store.h) for the Python adapters: a
framework's key-value store (jax.distributed's client, torch.distributed's
Store) handed to the runtime as muster_kv_t callbacks, a set of ranks on it
(allgather, barrier, abort, heartbeat liveness), a kind "store"
communicator over it, and muster_solve_comm on each process's own piece.

Linked into each adapter package as `_store.py` (like `_runtime.py`):
standard library only, no framework imported.  The framework's part is a
small object with three methods (KeyValue below) that muster_jax.distributed
and muster_torch.distributed build.  docs/multinode.md.
"""
import atexit
import ctypes
import itertools
import socket
import threading
import weakref

from . import _grid, _runtime

ENOENT, ESYS = -6, -17  # MUSTER_ENOENT, MUSTER_ESYS

_c = ctypes
_SET = _c.CFUNCTYPE(_c.c_int, _c.c_void_p, _c.c_char_p, _c.c_void_p, _c.c_size_t, _c.c_void_p, _c.c_size_t)
_GET = _c.CFUNCTYPE(_c.c_int, _c.c_void_p, _c.c_char_p, _c.c_double, _c.c_void_p, _c.c_size_t,
                    _c.POINTER(_c.c_size_t), _c.c_void_p, _c.c_size_t)
_DEL = _c.CFUNCTYPE(_c.c_int, _c.c_void_p, _c.c_char_p, _c.c_void_p, _c.c_size_t)


class _KV(_c.Structure):
    """muster_kv_t"""
    _fields_ = [("ctx", _c.c_void_p), ("set", _SET), ("get", _GET), ("del", _DEL)]


class _StoreOpts(_c.Structure):
    """muster_store_opts_t"""
    _fields_ = [("name", _c.c_char_p), ("rank", _c.c_int), ("size", _c.c_int),
                ("timeout_s", _c.c_double), ("beat_s", _c.c_double)]


class _CommOpts(_c.Structure):
    """muster_comm_opts_t"""
    _fields_ = [("kind", _c.c_char_p), ("rank", _c.c_int), ("size", _c.c_int), ("name", _c.c_char_p),
                ("job", _c.c_char_p), ("timeout_s", _c.c_double), ("device", _c.c_int),
                ("allgather", _c.c_void_p), ("ctx", _c.c_void_p)]


class _Query(_c.Structure):
    """muster_provider_query_t (include/muster/provider_v2.h)"""
    _fields_ = [("routine", _c.c_int), ("dtype", _c.c_int), ("n", _c.c_int64), ("nrhs", _c.c_int64),
                ("tile", _c.c_int64), ("layout", _c.c_int), ("flags", _c.c_uint), ("mem", _c.c_int),
                ("nranks", _c.c_int), ("ndevices", _c.c_int), ("nnodes", _c.c_int), ("span", _c.c_uint),
                ("devices", _c.c_void_p), ("free_bytes", _c.c_void_p), ("total_bytes", _c.c_void_p)]


SPAN_PROCESSES, SPAN_NODES = 0x2, 0x4  # MUSTER_SPAN_*
_vp, _i32 = _c.c_void_p, _c.c_int
_FUNCS = (  # (name, restype, argtypes): the store and comm functions only this module calls
    ("muster_store_open", _i32, [_c.POINTER(_KV), _c.POINTER(_StoreOpts), _c.POINTER(_vp)]),
    ("muster_store_allgather", _i32, [_vp, _vp, _vp, _c.c_size_t, _c.c_char_p, _c.c_size_t]),
    ("muster_store_barrier", _i32, [_vp]),
    ("muster_store_abort", _i32, [_vp, _i32, _c.c_char_p]),
    ("muster_store_check", _i32, [_vp]),
    ("muster_store_close", _i32, [_vp]),
    ("muster_comm_open", _i32, [_c.POINTER(_CommOpts), _c.POINTER(_vp)]),
    ("muster_comm_close", _i32, [_vp]),
    ("muster_provider_choose", _i32, [_c.POINTER(_Query), _c.c_char_p, _c.c_char_p, _c.c_size_t, _c.c_char_p,
                                      _c.c_size_t]),
    ("muster_solve_comm", _i32, [_vp, _c.POINTER(_runtime.SolveArgs), _c.POINTER(_runtime.Shard),
                                 _c.POINTER(_runtime.SolveResult)]),
    ("muster_solve_comm_dist", _i32, [_vp, _c.POINTER(_runtime.SolveArgs), _c.POINTER(_runtime.Shard),
                                      _c.POINTER(_runtime.Dist), _c.POINTER(_runtime.SolveResult)]),
    ("muster_solve_comm_fail", _i32, [_vp, _i32, _c.c_char_p]),
)
_declared = set()
_lock = threading.Lock()

# ---------------------------------------------------------------- the routines solve() takes
ROUTINES = ("potrs", "getrs", "syevd", "gels", "geqrf", "gesvd", "polar")
FACTORS = {"geqrf": ("Q", "R"), "gesvd": ("U", "VH"), "polar": ("UP", "H")}  # solve()'s order of the factors


def call_shape(lib, who: str, routine: str, n: int, m, b_shape, full_matrices=False, no_vectors=False,
               grid=None) -> dict:
    """What the adapters' distributed solve() passes for `routine`, its
    keywords checked: {"m": A's rows, "nrhs": B's columns (for geqrf,
    gesvd and polar the columns of the B the factors come back in), "flags"
    (MUSTER_NO_FACTOR for potrs, getrs and gels: solve() returns X alone),
    "w": reals written into W, "outputs": _runtime.routine_outputs' dict
    (geqrf, gesvd, polar) or None}.  b_shape: B's shape, None without B.
    ValueError (prefixed `who`) for a routine, keyword or B it does not
    take; a gels A that is not tall is the runtime's to refuse (its words)."""
    if routine not in ROUTINES:
        raise ValueError(f"{who}: routine {routine!r}: it takes {', '.join(ROUTINES)}")
    rows = n if m is None else int(m)
    if routine in ("potrs", "getrs", "syevd") and rows != n:
        raise ValueError(f"{who}: m={m}: {routine} takes a square A (m is for gels, geqrf, gesvd, polar)")
    takes_b = routine in ("potrs", "getrs", "gels")
    if takes_b != (b_shape is not None):
        raise ValueError(f"{who}: {routine} " + (f"needs b ({rows} x nrhs)" if takes_b else "takes no b"))
    if full_matrices and routine not in ("geqrf", "gesvd"):
        raise ValueError(f"{who}: full_matrices is for geqrf and gesvd, not {routine}")
    if no_vectors and routine not in ("syevd", "gesvd"):
        raise ValueError(f"{who}: no_vectors is for syevd and gesvd, not {routine}")
    if grid is not None and routine not in ("potrs", "getrs", "syevd"):
        raise ValueError(f"{who}: grid= is for potrs, getrs and syevd (a mesh of an n x n A); {routine} takes "
                         f"this process's column block of the m x n A")
    if takes_b:
        _grid.check_shape("B", b_shape, (rows, b_shape[-1]) if len(b_shape) == 2 else (rows,), who, " (all of B)")
    flags = (_runtime.FULL_MATRICES if full_matrices else 0) | (_runtime.NO_VECTORS if no_vectors else 0)
    if takes_b:  # potrs, getrs, gels return X alone, A's copy dropped: no factor to write back or stage out
        flags |= _runtime.NO_FACTOR
    out = dict(m=rows, flags=flags, nrhs=(int(b_shape[1]) if len(b_shape) == 2 else 1) if takes_b else 0,
               w=n if routine == "syevd" else 0, outputs=None)
    if routine in FACTORS:
        try:
            o = _runtime.routine_outputs(lib, _runtime.enum_value(lib, "routine", routine), flags, rows, n)
        except ValueError as e:
            raise ValueError(f"{who}: {routine} of an A of {rows} x {n}: {e}") from None
        out.update(outputs=o, nrhs=o["b_cols"], w=o["w_count"])
    return out


def factor_returns(routine: str, outputs: dict, a_back, part_of, w):
    """solve()'s return for geqrf, gesvd and polar, by the runtime's rule
    (muster_routine_outputs): the factor shaped like A is this process's
    piece (a_back, cut as A was), the others whole (part_of(rows, cols,
    offset): the part of B the runtime packed them in).  geqrf: (Q, R);
    polar: (U_p, H); gesvd: (U, S, V^H), or S alone with no_vectors."""
    got = {name: part_of(rows, cols, off) for name, rows, cols, off in outputs["parts"]}
    if outputs["a_holds"]:
        got[outputs["a_holds"]] = a_back
    if routine == "gesvd":
        return (got["U"], w, got["VH"]) if got else w
    first, second = FACTORS[routine]
    return got[first], got[second]


def _declare(lib):
    with _lock:
        if id(lib) not in _declared:
            for name, restype, argtypes in _FUNCS:
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
            _declared.add(id(lib))


def _say(err, cap, text):
    """Write text (NUL-terminated, cut to cap) into the C buffer err."""
    if err and cap:
        raw = text.encode(errors="replace")[:cap - 1] + b"\0"
        _c.memmove(err, raw, len(raw))


class KeyValue:
    """What a framework's store must offer (muster_kv_t's callbacks):

    set(key: str, value: bytes)               replaces any value
    get(key: str, timeout_s: float) -> bytes | None
                                              None when not there by then
    delete(key: str)                          optional (None: not offered)

    Each may be called from muster's heartbeat thread too."""


class _Callbacks:
    """The ctypes callbacks over a KeyValue; kept alive while the set is."""

    def __init__(self, kv):
        self.kv = kv
        self.kept = [_SET(self._set), _GET(self._get),
                     _DEL(self._del) if getattr(kv, "delete", None) else _DEL()]
        self.struct = _KV(None, *self.kept)

    def _set(self, ctx, key, val, n, err, cap):
        try:
            self.kv.set(key.decode(), _c.string_at(val, n) if n else b"")
            return 0
        except Exception as e:  # noqa: BLE001 - any store failure becomes the runtime's error
            _say(err, cap, f"{type(self.kv).__name__}.set({key.decode()!r}): {type(e).__name__}: {e}")
            return ESYS

    def _get(self, ctx, key, timeout_s, buf, cap, n_out, err, errcap):
        try:
            v = self.kv.get(key.decode(), float(timeout_s))
        except Exception as e:  # noqa: BLE001
            _say(err, errcap, f"{type(self.kv).__name__}.get({key.decode()!r}): {type(e).__name__}: {e}")
            return ESYS
        if v is None:
            return ENOENT
        _c.memmove(buf, v, min(len(v), cap))
        n_out[0] = len(v)
        return 0

    def _del(self, ctx, key, err, cap):
        try:
            self.kv.delete(key.decode())
            return 0
        except Exception as e:  # noqa: BLE001
            _say(err, cap, f"{type(self.kv).__name__}.delete({key.decode()!r}): {type(e).__name__}: {e}")
            return ESYS


_numbers = itertools.count()
_open = weakref.WeakSet()  # sets not closed yet: closed at exit (below)


@atexit.register
def _close_all():
    """Stop the heartbeat threads of sets left open before the interpreter
    goes: they call back into Python.  (atexit runs this before the
    framework's own exit handlers, registered earlier: jax.distributed's
    shutdown, torch's store.)"""
    for s in list(_open):
        try:
            s.close()
        except ValueError:
            pass


def next_name(prefix: str) -> str:
    """A set name for this process's next open: prefix.<k>, k counting the
    opens of this process.  Every process opens its sets in the same order,
    so the k-th open has the same name on every rank, and no name is used
    twice in one job's store (the runtime refuses that)."""
    return f"{prefix}.{next(_numbers)}"


class StoreSet:
    """This rank's end of a set of `size` ranks meeting over store `kv`
    (muster_store_open).  Use as a context manager, or call close().

    A failed runtime call of the set (its open, allgather, barrier,
    check, comm, engine, solve, close) raises error(lib, rc): by default
    _runtime.call_error's CallError (a ValueError carrying the code, its
    name and kind, the runtime's message as its text); an adapter may
    pass its own, a CallError too (muster_torch: the class of the code's
    kind that is also one, _lib.store_error)."""

    def __init__(self, lib, kv, name: str, rank: int, size: int, timeout_s: float = 0.0,
                 beat_s: float = 0.0, local_device=None, error=None):
        _declare(lib)
        self.lib, self.name, self.rank, self.size = lib, name, rank, size
        self.error = error or _runtime.call_error
        # () -> the CUDA ordinal this rank's GPU pieces are on (the adapter's
        # current device): engine()'s default, asked only when it needs it
        self.local_device = local_device or (lambda: 0)
        self._cb = _Callbacks(kv)
        self._ptr = _c.c_void_p()
        self._comm = None
        self.last = None  # the engine's report of this rank's last eager solve (solve())
        self.on_close = []  # callables run by close() before the comm closes (an adapter's own hold on it)
        o = _StoreOpts(name.encode(), rank, size, float(timeout_s or 0), float(beat_s or 0))
        self._rc(lib.muster_store_open(_c.byref(self._cb.struct), _c.byref(o), _c.byref(self._ptr)))
        _open.add(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rc(self, rc):
        """rc when >= 0, else the set's error raised (class docstring)."""
        if rc < 0:
            raise self.error(self.lib, rc)
        return rc

    def allgather(self, mine: bytes) -> list:
        """Every rank's bytes (each rank passes the same length)."""
        n = len(mine)
        out = _c.create_string_buffer(max(1, n * self.size))
        src = _c.create_string_buffer(mine, max(1, n))
        self._rc(self.lib.muster_store_allgather(self._ptr, src, out, n, None, 0))
        return [out.raw[r * n:(r + 1) * n] for r in range(self.size)]

    def barrier(self):
        self._rc(self.lib.muster_store_barrier(self._ptr))

    def abort(self, why: str, code: int = -14):
        """Fail the set for every rank (code: a MUSTER_E*, EPROVIDER by default)."""
        self.lib.muster_store_abort(self._ptr, int(code), why.encode())

    def refuse(self, why: str):
        """Raise ValueError(why) on this rank after failing the set with it
        (abort): a rank whose own arguments are wrong must not leave the
        others waiting in the call it will not make (a live peer is never
        timed out), so they fail at once naming it."""
        self.abort(why, code=_runtime.EINVAL)
        raise ValueError(why)

    def fail_call(self, exc: BaseException):
        """This rank's own step before a solve failed with exc (its piece's
        copy, a GPU short of memory): take part in the solve's first round
        with the failure (muster_solve_comm_fail), so that every other rank's
        solve fails at once naming this rank, where a live peer would be
        waited for however long; the set stays usable.  Returns the
        runtime's code; the caller raises exc."""
        text = f"{type(exc).__name__}: {exc}"
        memory = isinstance(exc, MemoryError) or "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower()
        code = _runtime.ENOMEM if memory else _runtime.EINVAL
        return self.lib.muster_solve_comm_fail(self.comm(), code, f"rank {self.rank}: {text}".encode(errors="replace"))

    def check(self):
        """The set's error (a ValueError) when the set failed, a peer is gone or silent."""
        self._rc(self.lib.muster_store_check(self._ptr))

    def comm(self):
        """The kind "store" communicator over this set (opened once)."""
        if not self._ptr:  # a jitted solve may outlive its set's with block
            raise ValueError(f"store set {self.name} (rank {self.rank} of {self.size}) is closed")
        if self._comm is None:
            o = _CommOpts(kind=b"store", rank=self.rank, size=self.size, name=self.name.encode(),
                          allgather=_c.cast(self.lib.muster_store_allgather, _c.c_void_p), ctx=self._ptr)
            c = _c.c_void_p()
            self._rc(self.lib.muster_comm_open(_c.byref(o), _c.byref(c)))
            self._comm = c
        return self._comm

    def nodes(self) -> int:
        """How many hosts the ranks run on (collective: an allgather of host names)."""
        mine = socket.gethostname().encode()[:64].ljust(64, b"\0")
        return len(set(self.allgather(mine)))

    def engine(self, routine: str, n: int, nrhs: int = 1, dtype: str = "f64", mem: int = _runtime.MEM_CUDA,
               provider: str | None = None, device: int | None = None):
        """(name, reason): the engine the runtime would choose for a call of
        every rank of this set, one device each, on memory `mem` (GPU arrays
        by default), on column blocks, without running anything
        (muster_provider_choose).  device: this rank's CUDA ordinal (default
        the adapter's current device); the ranks' ordinals go into the query
        as a call's would (runtime/solve/desc.c), since the one-GPU engine
        (cusolverdn) plans around the leader's device.  Free memory is not
        asked: an engine that would refuse the call for want of memory is
        still predicted.  Collective (an allgather of host names and
        devices): on one node the one-node engines are candidates too, as
        in solve() (runtime/solve/comm_local.c).  The set's error (a
        ValueError) naming every candidate and why it cannot run when none
        can (on a machine without a GPU: `cusolvermp (...): probe: no usable
        CUDA driver ...`)."""
        cuda = mem == _runtime.MEM_CUDA
        dev = (self.local_device() if device is None else device) if cuda else -1
        mine = socket.gethostname().encode()[:64].ljust(64, b"\0") + int(dev).to_bytes(4, "little", signed=True)
        seen = self.allgather(mine)
        nnodes = len({b[:64] for b in seen})
        devices = (_c.c_int * self.size)(*(int.from_bytes(b[64:], "little", signed=True) for b in seen))
        lib = self.lib
        q = _Query(routine=_runtime.enum_value(lib, "routine", routine), dtype=_runtime.enum_value(lib, "dtype", dtype),
                   n=n, nrhs=nrhs if routine in ("potrs", "getrs", "gels") else 0, mem=mem, nranks=self.size,
                   ndevices=self.size, nnodes=nnodes, span=SPAN_NODES if nnodes > 1 else SPAN_PROCESSES,
                   devices=_c.cast(devices, _c.c_void_p))
        name, reason = _c.create_string_buffer(32), _c.create_string_buffer(_runtime.MAX_REASON)
        self._rc(lib.muster_provider_choose(_c.byref(q), provider.encode() if provider else None, name, 32, reason,
                                            _runtime.MAX_REASON))
        return name.value.decode(), reason.value.decode(errors="replace")

    def solve(self, args, shard, dist=None):
        """muster_solve_comm over comm() (dist, a _runtime.Dist: this rank's
        piece is 2-D, muster_solve_comm_dist): the result; the set's error
        (class docstring) when it fails, the same code on every rank, its
        info the result's (potrs: the leading minor not positive definite)."""
        res = _runtime.new_result()
        if dist is not None:
            rc = self.lib.muster_solve_comm_dist(self.comm(), _c.byref(args), _c.byref(shard), _c.byref(dist),
                                                 _c.byref(res))
        else:
            rc = self.lib.muster_solve_comm(self.comm(), _c.byref(args), _c.byref(shard), _c.byref(res))
        if rc < 0:
            err = self.error(self.lib, rc)
            err.info = res.info  # potrs's leading minor, as muster_torch's local ops give it
            raise err
        # which engine ran and why: the caller of the adapters' solve() gets
        # X alone, and engine() only predicts
        self.last = dict(provider=res.provider.decode(errors="replace"), reason=res.reason.decode(errors="replace"),
                         seconds=res.seconds, tile=res.tile)
        return res

    def close(self):
        while self.on_close:
            self.on_close.pop()()
        if self._comm is not None:
            self.lib.muster_comm_close(self._comm)
            self._comm = None
        if self._ptr:
            rc = self.lib.muster_store_close(self._ptr)
            self._ptr = _c.c_void_p()
            _open.discard(self)
            self._rc(rc)
