"""libmuster.so for the Python adapters: where the built libraries are, the
runtime's C functions with their ctypes signatures, and the C structs of the
solve API (include/muster.h) mirrored in ctypes.

This one file is linked into every adapter package as `_runtime.py`
(muster_jax, muster_tf, muster_torch: symbolic links to
adapters/common/runtime.py), so each package stays installable on its own
(pip copies the linked file into the package) while the search order and
each C signature are written once.  Standard library only: no framework is
imported here.  tests/python/torch/test_runtime_abi.py compiles a C program
against muster.h and checks every struct and constant below against it.

Search order for the folder holding an adapter's libraries (lib_dir):
  1. $MUSTER_LIB_DIR      (explicit override: a build's lib folder)
  2. the muster-runtime wheel's lib folder (muster_runtime.lib_dir()): what
     an installed package uses (docs/install.md)
  3. in a source tree only (the package sits in <repo>/adapters/<framework>/
     beside <repo>/SConstruct): $MUSTER_BUILD/lib (relative to the
     repository unless absolute), then <repo>/build/lib
A package that finds none fails at import with missing_libraries()'s
message, the same in every adapter.  The runtime finds its providers under
<that folder>/muster/providers unless $MUSTER_PROVIDER_PATH says otherwise.
"""
import ctypes
import os
import pathlib
import threading

_lock = threading.Lock()
_loaded = {}  # folder -> CDLL of its libmuster.so


RUNTIME_DIST = "muster-runtime"  # the wheel holding the libraries (tools/wheels/runtime)


def _source_tree(pkg_dir: pathlib.Path):
    """<repo> when the package is <repo>/adapters/<framework>/<package> of a
    source tree, else None (an installed package: no guesses)."""
    repo = pkg_dir.parent.parent.parent
    if pkg_dir.parent.parent.name == "adapters" and (repo / "SConstruct").is_file():
        return repo
    return None


def candidates(pkg_dir: pathlib.Path):
    """The folders lib_dir tries, in order (module docstring)."""
    if os.environ.get("MUSTER_LIB_DIR"):
        yield pathlib.Path(os.environ["MUSTER_LIB_DIR"])
    try:
        import muster_runtime
        yield muster_runtime.lib_dir()
    except ImportError:
        pass
    repo = _source_tree(pkg_dir)
    if repo is not None:
        if os.environ.get("MUSTER_BUILD"):
            b = pathlib.Path(os.environ["MUSTER_BUILD"])
            yield (b if b.is_absolute() else repo / b) / "lib"
        yield repo / "build" / "lib"


def package_version(dist: str) -> str:
    """The installed distribution's version ("0+unknown" for a package run
    from a source tree): the wheels' one version, include/muster.h's, which
    `muster --version` prints too."""
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def missing_libraries(who: str, dist: str, names, tried) -> str:
    """The one message of every adapter whose libraries are missing: what is
    missing, where it looked, how to get it."""
    v = package_version(dist)
    pin = f"=={v}" if v != "0+unknown" else ""
    return (f"{who} cannot find the muster libraries: {' and '.join(names)} "
            f"not in {', '.join(map(str, tried)) or 'any folder (no muster-runtime installed)'}. "
            f"Install the runtime wheel of the same version (pip install {RUNTIME_DIST}{pin}; "
            f"docs/install.md), or set MUSTER_LIB_DIR to the lib folder of a muster build")


def lib_dir(pkg_dir: pathlib.Path, libname: str, who: str, dist: str = "") -> pathlib.Path:
    """The first folder of the search order that holds `libname` and
    libmuster.so.

    Args:
      pkg_dir: the adapter package's folder (resolved).
      libname: the file that must be there ("libmuster.so", "libmuster_jax.so").
      who: the package, for the message.
      dist: its distribution name (default: who), for the version it pins.

    Raises:
      ImportError: no folder holds them; missing_libraries()'s message.
    """
    names = sorted({libname, "libmuster.so"})
    tried = []
    for d in candidates(pkg_dir):
        if all((d / n).exists() for n in names):
            return d
        tried.append(d)
    raise ImportError(missing_libraries(who, dist or who, names, tried))


# ---------------------------------------------------------------- C structs
MEM_HOST, MEM_CUDA = 1, 2                # muster_mem_t
LAYOUT_BLOCK, LAYOUT_CYCLIC = 0, 1       # muster_layout_t
NO_VECTORS, NO_FACTOR = 0x1, 0x2         # solve flags
FULL_MATRICES = 0x8                      # MUSTER_FULL_MATRICES: geqrf's complete Q, gesvd's full U, V^H
MAX_RANKS, MAX_NAME, MAX_JOB, MAX_REASON = 64, 96, 64, 256
EINVAL, ENOMEM, EPOISONED = -1, -2, -11  # MUSTER_EINVAL, MUSTER_ENOMEM, MUSTER_EPOISONED


class Named(ctypes.Structure):
    """muster_named_t (muster/named.h): a rank's seat for muster_solve_named
    and muster_abort_named; n is set by the solve."""
    _fields_ = [("group", ctypes.c_char_p), ("rank", ctypes.c_int), ("nranks", ctypes.c_int),
                ("job", ctypes.c_char_p), ("timeout_s", ctypes.c_double), ("device", ctypes.c_int),
                ("tag", ctypes.c_uint64), ("n", ctypes.c_int64)]


class SolveArgs(ctypes.Structure):
    """muster_solve_args_t"""
    _fields_ = [("routine", ctypes.c_int), ("dtype", ctypes.c_int), ("n", ctypes.c_int64),
                ("nrhs", ctypes.c_int64), ("tile", ctypes.c_int64), ("layout", ctypes.c_int),
                ("flags", ctypes.c_uint), ("provider", ctypes.c_char_p)]


class Shard(ctypes.Structure):
    """muster_shard_t"""
    _fields_ = [("mem", ctypes.c_int), ("device", ctypes.c_int), ("a", ctypes.c_void_p),
                ("lda", ctypes.c_int64), ("col0", ctypes.c_int64), ("ncols", ctypes.c_int64),
                ("b", ctypes.c_void_p), ("ldb", ctypes.c_int64), ("w", ctypes.c_void_p),
                ("stream", ctypes.c_void_p)]


class Dist(ctypes.Structure):
    """muster_dist_t (include/muster/layout.h): a 2-D block-cyclic piece"""
    _fields_ = [("m", ctypes.c_int64), ("n", ctypes.c_int64), ("mb", ctypes.c_int64), ("nb", ctypes.c_int64),
                ("nprow", ctypes.c_int), ("npcol", ctypes.c_int), ("myrow", ctypes.c_int), ("mycol", ctypes.c_int),
                ("lld", ctypes.c_int64)]


class SolveResult(ctypes.Structure):
    """muster_solve_result_t"""
    _fields_ = [("info", ctypes.c_int64), ("tile", ctypes.c_int64), ("seconds", ctypes.c_double),
                ("provider", ctypes.c_char * 32), ("reason", ctypes.c_char * MAX_REASON)]


def new_result() -> SolveResult:
    """A zeroed muster_solve_result_t at the start of a 4 KiB buffer: should
    the library's struct have grown (results gain fields at the end), it
    writes into spare bytes instead of past the object.  The fields above
    are checked against muster.h by tests/python/torch/test_runtime_abi.py."""
    return SolveResult.from_buffer(bytearray(4096))


# ------------------------------------------------------------- C functions
_i64, _i32, _str, _vp = ctypes.c_int64, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p
_P64, _P = ctypes.POINTER(_i64), ctypes.POINTER
# (name, restype, argtypes) of every libmuster function an adapter calls
FUNCS = (
    ("muster_last_error", _str, []),
    ("muster_strerror", _str, [_i32]),
    ("muster_err_name", _str, [_i32]),
    ("muster_err_kind", _i32, [_i32]),
    ("muster_err_kind_name", _str, [_i32]),
    ("muster_routine_from_name", _i32, [_str, _P(_i32)]),
    ("muster_dtype_from_name", _i32, [_str, _P(_i32)]),
    ("muster_layout_valid_tiles", _i64, [_i64, _i32, _P64, _i64]),
    ("muster_layout_check_tile", _i32, [_i64, _i64, _i32]),
    ("muster_layout_local_cols", _i64, [_i64, _i64, _i32]),
    ("muster_layout_block_cols", _i32, [_i64, _i32, _i32, _P64, _P64]),
    ("muster_layout_cyclic_cols", _i64, [_i64, _i64, _i32, _i32, _P64, _i64]),
    ("muster_solve_named", _i32, [_P(Named), _P(SolveArgs), _P(Shard), _P(SolveResult)]),
    ("muster_abort_named", _i32, [_P(Named), _i32, _str]),
    ("muster_solve_all", _i32, [_P(SolveArgs), _i32, _P(Shard), _P(SolveResult)]),
    ("muster_shard_alloc", _i32, [ctypes.c_size_t, _P(_vp)]),
    ("muster_shard_free", None, [_vp]),
    ("muster_timeout", _i32, [ctypes.c_double, _P(ctypes.c_double)]),
    ("muster_segment_name_match", _i32, [_str, ctypes.c_uint, _str]),
    ("muster_routine_outputs_flat", _i32, [_i32, ctypes.c_uint, _i64, _i64, _P64]),
    ("muster_providers_release", _i32, []),
)


def load(folder: pathlib.Path) -> ctypes.CDLL:
    """libmuster.so of `folder`, loaded once, every function of FUNCS declared.

    Adapters whose own library links libmuster.so (rpath $ORIGIN) load this
    same file, so ctypes and the adapter share one runtime."""
    with _lock:
        lib = _loaded.get(folder)
        if lib is None:
            lib = ctypes.CDLL(str(folder / "libmuster.so"))
            for name, restype, argtypes in FUNCS:
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
            _loaded[folder] = lib
        return lib


def _text(s: bytes) -> str:
    return s.decode(errors="replace")


def last_error(lib) -> str:
    """The runtime's message for this thread's last failure ("" if none)."""
    return _text(lib.muster_last_error())


def strerror(lib, code: int) -> str:
    """Short meaning of a MUSTER_E* code ("peer died")."""
    return _text(lib.muster_strerror(int(code)))


def err_name(lib, code: int) -> str:
    """The code's name ("MUSTER_EPEERDEAD"; "MUSTER_E?" if unknown)."""
    return _text(lib.muster_err_name(int(code)))


def err_kind(lib, code: int) -> str:
    """The kind of failure a code is ("numerical", "aborted"...; docs/errors.md)."""
    return _text(lib.muster_err_kind_name(lib.muster_err_kind(int(code))))


def message(lib, code: int) -> str:
    """What to tell a user about a failed call: the runtime's detailed message,
    or the code's name and meaning where it left none.  Call it on the thread
    that made the failed call, before any other runtime call."""
    return last_error(lib) or f"{err_name(lib, code)}: {strerror(lib, code)} ({err_kind(lib, code)})"


class CallError(ValueError):
    """A failed runtime call, as the Python adapters raise it (check(), the
    store route: muster_jax.distributed, muster_torch.distributed).

    Attributes:
      code: the negative MUSTER_E* code (MUSTER_ENOMEM: -2).
      name: its name ("MUSTER_ENOMEM"; muster_err_name).
      kind: its kind ("resource_exhausted"; muster_err_kind_name,
        docs/errors.md): what a caller branches on.
      info: a failed solve's muster_solve_result_t.info (potrs: the order
        of the leading minor that is not positive definite), else 0.

    A ValueError, as every such failure was before the class existed, so
    `except ValueError` still catches it.  str(): message()."""

    def __init__(self, msg, code: int = 0, name: str = "", kind: str = "", info: int = 0):
        super().__init__(msg)
        self.code, self.name, self.kind, self.info = code, name, kind, info


def call_error(lib, rc: int, say=None) -> CallError:
    """The CallError of failed call rc (< 0): message(lib, rc) (or say(that
    message), for a caller that words it), with rc's code, name and kind.
    Call it on the thread that made the call, before any other runtime
    call (message())."""
    text = message(lib, rc)
    return CallError(say(text) if say else text, code=int(rc), name=err_name(lib, rc), kind=err_kind(lib, rc))


def check(lib, rc: int) -> int:
    """rc when it is >= 0; call_error(lib, rc) (a CallError, a ValueError)
    raised otherwise."""
    if rc < 0:
        raise call_error(lib, rc)
    return rc


def enum_value(lib, kind: str, name: str) -> int:
    """The runtime's value of a routine ("potrs") or dtype ("f64") name."""
    out = ctypes.c_int()
    fn = lib.muster_routine_from_name if kind == "routine" else lib.muster_dtype_from_name
    check(lib, fn(name.encode(), ctypes.byref(out)))
    return out.value


DEFAULT_TIMEOUT_S = 60.0  # MUSTER_DEFAULT_TIMEOUT_S (include/muster.h)


def timeout_seconds(lib, given: float | None) -> float:
    """The deadline a call gets, by the runtime's one rule (muster_timeout,
    muster.h): `given` when > 0, else $MUSTER_TIMEOUT, else
    DEFAULT_TIMEOUT_S; 0 means none.  For waits an adapter makes outside
    the runtime (a framework's own collective), so that they end when the
    runtime's would.  CallError (a ValueError) for a malformed
    $MUSTER_TIMEOUT (or `given`), with the runtime's message naming it."""
    out = ctypes.c_double()
    check(lib, lib.muster_timeout(float(given or 0.0), ctypes.byref(out)))
    return out.value


SEGMENT_DIR = "/dev/shm"          # MUSTER_SEGMENT_DIR (include/muster/segment.h)
SEGMENT_MINE, SEGMENT_HERE = 0x1, 0x2  # MUSTER_SEGMENT_MINE, MUSTER_SEGMENT_HERE


def job_segments(lib, job: str, folder: str = SEGMENT_DIR) -> list[str]:
    """Paths of the segments of `job` and this uid in `folder`, of any pid
    namespace and any group: what a test (or a rank in a container sharing
    /dev/shm) leaked.  The names are judged by the runtime's own parser
    (muster_segment_name_match, include/muster/segment.h: the format is
    muster.<uid>.<pidns>.<job>.<group>) through ctypes rather than by a
    Python copy of the rule: a copy drifts (the torch suite's glob lacked
    <pidns> and matched nothing), and one that calls the C function needs
    no test of its own to stay the same as it."""
    want = lib.muster_segment_name_match
    return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                  if want(os.fsencode(f), SEGMENT_MINE, job.encode()))


FACTOR_NAMES = (None, "Q", "R", "U", "VH", "UP", "H")  # muster_factor_t (muster/layout.h)


def routine_outputs(lib, routine: int, flags: int, m: int, n: int) -> dict:
    """Where geqrf, gesvd or polar leave their factors: the runtime's one
    rule, muster_routine_outputs (muster/layout.h, docs/factorizations.md).

    Returns {"a_holds": the factor A's array holds (FACTOR_NAMES' name, or
    None), "parts": [(name, rows, cols, offset) of each factor packed into
    B], "b_cols": the least nrhs, "w_count": reals written into W}.
    ValueError for a routine, flag or shape the rule refuses."""
    out = (_i64 * 12)()
    check(lib, lib.muster_routine_outputs_flat(int(routine), int(flags), int(m), int(n), out))
    parts = [(FACTOR_NAMES[out[2 + 4 * i]],) + tuple(out[3 + 4 * i:6 + 4 * i]) for i in range(out[1])]
    return {"a_holds": FACTOR_NAMES[out[0]], "parts": parts, "b_cols": out[10], "w_count": out[11]}


def block_cols(lib, n: int, nranks: int, rank: int) -> tuple[int, int]:
    """(first column, count) of `rank`'s block of n columns over `nranks`
    (muster_layout_block_cols); ValueError for arguments it refuses."""
    c0, k = ctypes.c_int64(), ctypes.c_int64()
    check(lib, lib.muster_layout_block_cols(int(n), int(nranks), int(rank), ctypes.byref(c0),
                                            ctypes.byref(k)))
    return c0.value, k.value


def release(lib) -> int:
    """muster_providers_release (include/muster/providers.h): every provider
    loaded in this process gives back what it keeps between calls
    (cuSOLVERMp's NCCL communicators and buffers, cuSolverMg's, cuSOLVERDn's
    and the tiled provider's handles, streams, device buffers and IPC
    mappings): it is unloaded now, or when the call still running it
    returns (unless a call that starts meanwhile takes it back: it then
    stays until the next release).  The next solve loads it again, as at
    first use, and pays for that (its libraries, communicators, handles).
    On a multi-process set, every process calls it between solves: a rank
    that kept its communicators while the others dropped theirs can make
    the next call fail.  Returns the C call's code (0, or a negative
    MUSTER_E*) for the adapter to raise as its errors are raised."""
    return lib.muster_providers_release()
