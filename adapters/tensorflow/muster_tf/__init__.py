"""muster_tf: multi-device dense solvers for TensorFlow through the muster runtime.

Every participant passes its shard and gets its part of the solution back:

* a replica of a ``tf.distribute.MirroredStrategy`` over several (logical)
  CPU devices, inside ``tf.function`` (rank and count come from the replica
  context), or
* a worker process (``rank=`` and ``nranks=`` given explicitly; its buffers
  then live in shared memory the leader can map).

The shard of the global n x n matrix A is a column block ``A[:, c0:c0+k]``
with ``c0, k = block_columns(n, nranks, rank)`` (blocks of ceil(n/nranks)
columns, the last ones possibly shorter or empty).

    x    = potrs(a, b)   # A X = B, A SPD/HPD; b (n x nrhs) replicated, X replicated
    x, l = potrs(a, b, return_logdet=True)   # and l = log det A (real scalar)
    inv  = potri(a)      # this participant's column block of A^-1
    w, v = syevd(a)      # all eigenvalues (ascending), this participant's
                         # column block of the eigenvectors
    x    = getrs(a, b)   # A X = B for a general square A (LU)
    x    = gels(a, b)    # least squares, A m x n (m >= n, full rank): a is
                         # [m, k] (A's n columns split as above), b [m, nrhs],
                         # X [n, nrhs]

dtypes: float32, float64, complex64, complex128.  Inputs are never modified.
Errors are TensorFlow errors carrying the runtime's message (who, what, where).

Replicas meet at a barrier, so they must run concurrently: inside
``tf.function`` (in eager mode MirroredStrategy runs replicas one after another
and muster_tf refuses with a clear error), and with at least one TensorFlow
inter-op thread per replica (each blocks one while it waits).
``configure_cpu_devices(n)`` sets both up for n logical CPU devices.
"""
import itertools
import os
import threading
import weakref

from . import _lib, _runtime

__version__ = _runtime.package_version("muster_tf")
# a package without its libraries, or with a TensorFlow of another version
# than its libmuster_tf.so was built for, fails at import, saying what is
# missing and how to get it (the libraries first: no TensorFlow import)
_lib.lib_path()
tf = _lib.import_tensorflow()

from ._lib import block_cols, lib_path, ops  # noqa: E402

__all__ = ["potrs", "potri", "syevd", "getrs", "gels", "block_columns", "configure_cpu_devices",
           "shard_columns", "gather_columns", "lib_path", "ops"]

DTYPES = (tf.float32, tf.float64, tf.complex64, tf.complex128)

_lock = threading.Lock()
_graphs = weakref.WeakKeyDictionary()  # graph -> {"seq": int, "calls": {rank: int},
                                       #          "last": {rank: tf.Operation}}
_graph_seq = itertools.count()


def block_columns(n, nranks, rank):
    """(first column, column count) of `rank`'s block of an n-column matrix
    split over `nranks`: blocks of ceil(n/nranks) columns, the rule of the
    runtime (muster/layout.h), asked of libmuster.so.  ValueError for
    n < 1, nranks outside 1..64 or rank outside 0..nranks-1."""
    return block_cols(int(n), int(nranks), int(rank))


def configure_cpu_devices(n, inter_op_threads=None):
    """Split the host CPU into `n` logical devices and give TensorFlow enough
    inter-op threads for n replicas to wait at a rendezvous together (one
    per replica is the least; it sets two per replica plus two, leaving
    threads for the other ops of the step).  Call
    it before TensorFlow initializes its runtime (before any op runs).
    Returns the logical device names, e.g. for MirroredStrategy(devices)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(int(n))])
        want = inter_op_threads or max(2 * int(n) + 2, _inter_op_threads())
        tf.config.threading.set_inter_op_parallelism_threads(int(want))
    except RuntimeError as e:
        raise RuntimeError("muster_tf.configure_cpu_devices must run before TensorFlow "
                           "initializes its runtime (before the first op): %s" % e) from e
    return [d.name for d in tf.config.list_logical_devices("CPU")]


def _inter_op_threads():
    """Inter-op threads TensorFlow uses (0 in its config means: the env
    TF_NUM_INTEROP_THREADS, else one per schedulable CPU)."""
    n = tf.config.threading.get_inter_op_parallelism_threads()
    if n > 0:
        return n
    env = os.environ.get("TF_NUM_INTEROP_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return len(os.sched_getaffinity(0))


def shard_columns(strategy, a):
    """A PerReplica value: replica r holds its column block of `a` (n x n)."""
    a = tf.convert_to_tensor(a)
    n, nranks = int(a.shape[1]), strategy.num_replicas_in_sync

    def value_fn(ctx):
        c0, k = block_columns(n, nranks, ctx.replica_id_in_sync_group)
        return tf.identity(a[:, c0:c0 + k])
    return strategy.experimental_distribute_values_from_function(value_fn)


def gather_columns(strategy, per_replica):
    """Concatenate the replicas' column blocks back into one matrix."""
    return tf.concat(strategy.experimental_local_results(per_replica), axis=1)


# ---- who is calling ----------------------------------------------------------

def _participant(opname, rank, nranks, shared_memory):
    """(rank, nranks, shared_memory, threads, replicas) of this call.
    threads: the participants are threads of this process.  replicas: how
    many of them are replicas of this process's strategy (0: explicit
    ranks, the caller's own threads or processes)."""
    if (rank is None) != (nranks is None):
        raise ValueError("muster_tf.%s: pass both rank= and nranks=, or neither" % opname)
    if rank is not None:
        rank, nranks = int(rank), int(nranks)
        if not 0 <= rank < nranks:
            raise ValueError("muster_tf.%s: need 0 <= rank < nranks, got rank=%d nranks=%d"
                             % (opname, rank, nranks))
        shared = True if shared_memory is None else bool(shared_memory)
        return rank, nranks, shared, not shared, 0
    ctx = tf.distribute.get_replica_context()
    if ctx is None:
        raise RuntimeError("muster_tf.%s: called in a cross-replica context; call it inside "
                           "strategy.run(...), or pass rank= and nranks=" % opname)
    nranks = ctx.num_replicas_in_sync
    local = _local_replicas(ctx, nranks)
    if local > 1 and tf.executing_eagerly():
        raise RuntimeError(
            "muster_tf.%s: called eagerly inside strategy.run with %d replicas. In eager mode "
            "MirroredStrategy runs the replicas one after another, so the first would wait "
            "forever at the rendezvous for the others. Call strategy.run inside a tf.function "
            "(replicas then run concurrently)." % (opname, local))
    rid = tf.get_static_value(ctx.replica_id_in_sync_group)
    if rid is None:
        raise RuntimeError("muster_tf.%s: the replica id is not known at trace time; pass "
                           "rank= and nranks=" % opname)
    if local > 1 and _inter_op_threads() < local:
        raise RuntimeError(
            "muster_tf.%s: %d replicas each block one TensorFlow inter-op thread while they "
            "meet, but TensorFlow has %d; call "
            "tf.config.threading.set_inter_op_parallelism_threads(%d or more) (or "
            "muster_tf.configure_cpu_devices) before TensorFlow starts"
            % (opname, local, _inter_op_threads(), 2 * local + 2))
    shared = (local < nranks) if shared_memory is None else bool(shared_memory)
    return int(rid), nranks, shared, local > 1, local


def _local_replicas(ctx, nranks):
    """Replicas of this process (a multi-worker strategy spans processes)."""
    try:
        return len(ctx.strategy.extended.worker_devices) or nranks
    except (AttributeError, RuntimeError):  # the default strategy has none
        return nranks


def _trace_position(rank):
    """(graph sequence number, k): this is the k-th muster op that `rank`
    adds to the graph being traced; (None, 0) in eager mode."""
    if tf.executing_eagerly():
        return None, 0
    g = tf.compat.v1.get_default_graph()
    with _lock:
        st = _graphs.get(g)
        if st is None:
            st = _graphs[g] = {"seq": next(_graph_seq), "calls": {}, "last": {}}
        k = st["calls"].get(rank, 0)
        st["calls"][rank] = k + 1
    return st["seq"], k


def _auto_key(seq, k, nranks, threads):
    """A group key that every participant of this call computes alike and no
    other muster op in flight shares.  Eager: calls of one process are
    sequential, one key per size reuses one group.  Traced: the k-th muster
    op that replica r adds to a graph meets the k-th of every other replica
    (they trace the same function); the graph's sequence number keeps
    different traces apart, the pid keeps other processes' replicas apart."""
    if seq is None:
        return "e%d" % nranks
    return "%sg%d.%d.n%d" % ("p%d" % os.getpid() if threads else "", seq, k, nranks)


def _in_program_order(rank, make):
    """Create this call's op with make() so that, inside tf.function, it
    runs after the previous muster op `rank` added to this graph and
    independently of every other op.

    TensorFlow's automatic control dependencies chain all stateful ops of a
    function in program order, across replicas: replica 1's op would wait
    for replica 0's, which waits for replica 1 at the barrier.  So the op is
    marked run_independently (it still always runs), and its own replica's
    order is kept by an explicit control dependency: without it the
    scheduler may start a replica's ops in any order, and two replicas (or
    two worker processes, each with its own graph) can each wait in a
    different group for the other until the timeout.  In program order, a
    replica has at most one muster op in flight, so R replicas need R
    inter-op threads, whatever the number of ops."""
    if tf.executing_eagerly():
        return make()
    g = tf.compat.v1.get_default_graph()
    with _lock:
        prev = _graphs[g]["last"].get(rank)
    with tf.control_dependencies([prev] if prev is not None else []):
        out = make()
    op = (out[0] if isinstance(out, (list, tuple)) else out).op
    with _lock:
        _graphs[g]["last"][rank] = op
    mgr = getattr(g, "experimental_acd_manager", None)
    if mgr is not None:
        mgr.run_independently(op)
    return out


def _matrix(opname, x, what, dtype=None):
    x = tf.convert_to_tensor(x, dtype=dtype)
    if x.dtype not in DTYPES:
        raise TypeError("muster_tf.%s: %s has dtype %s; supported: float32, float64, "
                        "complex64, complex128" % (opname, what, x.dtype.name))
    if x.shape.rank is not None and x.shape.rank != 2:
        raise ValueError("muster_tf.%s: %s must be a matrix (rank 2), got shape %s"
                         % (opname, what, x.shape))
    return x


def _attrs(opname, rank, nranks, key, tile, provider, timeout, shared_memory):
    rank, nranks, shared, threads, local = _participant(opname, rank, nranks, shared_memory)
    seq, k = _trace_position(rank)
    return dict(rank=rank, nranks=nranks, same_step=local > 1 and not shared,
                key=str(key) if key is not None else _auto_key(seq, k, nranks, threads),
                tile=int(tile), provider=provider or "", shared_memory=shared,
                timeout=float(timeout or 0))


# ---- the ops -------------------------------------------------------------------

def _solve(opname, op, a, b, attrs, name, logdet=False):
    """potrs, getrs, gels: X from this participant's block a and the
    replicated b (a matrix, or a vector: one column); (X, log det A) for
    potrs with logdet."""
    a = _matrix(opname, a, "a")
    b = tf.convert_to_tensor(b, dtype=a.dtype)
    vector = b.shape.rank == 1
    if vector:
        b = b[:, None]
    b = _matrix(opname, b, "b")
    extra = dict(Tw=a.dtype.real_dtype) if logdet else {}
    kw = _attrs(opname, *attrs)
    out = _in_program_order(kw["rank"], lambda: op(a, b, name=name, **extra, **kw))
    x = out[0] if logdet else out
    x = x[:, 0] if vector else x
    return (x, out[1]) if logdet else x


def potrs(a, b, *, return_logdet=False, rank=None, nranks=None, key=None, tile=0, provider=None,
          timeout=None, shared_memory=None, name=None):
    """Solve A X = B (A Hermitian positive definite) from this participant's
    column block `a` of A and the replicated right-hand sides `b` (n x nrhs,
    or a vector of n).  Returns X, shaped like b, on every participant;
    with return_logdet, (X, log det A): a real scalar (float32 for float32
    and complex64, float64 otherwise) from the Cholesky factor of the same
    call (op MusterPotrsLogdet; only providers that can return it run it)."""
    op = ops().muster_potrs_logdet if return_logdet else ops().muster_potrs
    return _solve("potrs", op, a, b, (rank, nranks, key, tile, provider, timeout, shared_memory),
                  name, logdet=return_logdet)


def getrs(a, b, *, rank=None, nranks=None, key=None, tile=0, provider=None, timeout=None,
          shared_memory=None, name=None):
    """Solve A X = B for a general square A (LU with partial pivoting);
    arguments and result as potrs.  A singular A fails with
    InvalidArgumentError naming the zero pivot."""
    return _solve("getrs", ops().muster_getrs, a, b,
                  (rank, nranks, key, tile, provider, timeout, shared_memory), name)


def gels(a, b, *, rank=None, nranks=None, key=None, tile=0, provider=None, timeout=None,
         shared_memory=None, name=None):
    """Least squares: X minimizing ||A X - B|| for a tall A (m x n, m >= n)
    of full column rank.  `a` is this participant's column block [m, k] (A's
    n columns split by block_columns(n, ...)), `b` the replicated [m, nrhs]
    (or [m]).  Returns X [n, nrhs] (or [n]) on every participant; its n is
    learnt at the rendezvous from the blocks' widths, so its static shape
    is [None, nrhs].  A rank-deficient A fails with InvalidArgumentError."""
    return _solve("gels", ops().muster_gels, a, b,
                  (rank, nranks, key, tile, provider, timeout, shared_memory), name)


def potri(a, *, rank=None, nranks=None, key=None, tile=0, provider=None, timeout=None,
          shared_memory=None, name=None):
    """This participant's column block of A^-1 (A Hermitian positive definite)."""
    a = _matrix("potri", a, "a")
    kw = _attrs("potri", rank, nranks, key, tile, provider, timeout, shared_memory)
    return _in_program_order(kw["rank"], lambda: ops().muster_potri(a, name=name, **kw))


def syevd(a, *, rank=None, nranks=None, key=None, tile=0, provider=None, timeout=None,
          shared_memory=None, name=None):
    """Eigen-decomposition of Hermitian A: (w, v) with all n eigenvalues w
    (ascending, real) and this participant's column block v of the
    eigenvectors (A V = V diag(w))."""
    a = _matrix("syevd", a, "a")
    kw = _attrs("syevd", rank, nranks, key, tile, provider, timeout, shared_memory)
    w, v = _in_program_order(
        kw["rank"], lambda: ops().muster_syevd(a, Tw=a.dtype.real_dtype, name=name, **kw))
    return w, v
