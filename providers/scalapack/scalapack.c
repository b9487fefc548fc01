/*
 * providers/scalapack/scalapack.c - the collective CPU provider: ScaLAPACK
 * (Debian's libscalapack-openmpi) on a BLACS grid built from the MPI
 * bootstrap's communicator.  The hooks, and collective_solve's outline
 * (slInt.h says the steps).
 *
 * MPI: the provider links libscalapack-openmpi and so libmpi.so.40, which
 * resolves to the Open MPI the process already runs (the caller, or the
 * runtime's MPI bootstrap, initialized it: the provider never does).  The
 * .so is built with -fvisibility=hidden: muster_provider_v2 is its only
 * exported symbol.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/finite.h"
#include "slInt.h"

#define ALL_ROUTINES (MUSTER_ROUTINE_BITS(POTRS, POTRI, SYEVD, GETRS, GELS))
int sl_takes_b(const sl_call_t *s) {
  return (muster_routine_takes(s->args->routine) & MUSTER_TAKES_B) != 0;
}

/* A general A (getrs, gels): every element is read, and none written back. */
static int general(const sl_call_t *s) {
  return s->args->routine == MUSTER_GETRS || s->args->routine == MUSTER_GELS;
}

int sl_err(const sl_call_t *s, int code, const char *fmt, ...) {
  const muster_collective_call_t *cc = s->cc;
  if (!cc->err || cc->errlen == 0) return code;
  const char *r = muster_routine_str(s->args->routine), *t = muster_dtype_str(s->args->dtype);
  char host[64] = "?", who[192];
  gethostname(host, sizeof host - 1);
  snprintf(who, sizeof who, "scalapack (rank %d of %d, pid %d on %s, %s %s n=%" PRId64 ")", s->rank, s->size,
           (int)getpid(), host, r ? r : "?", t ? t : "?", s->args->n);
  va_list ap;
  va_start(ap, fmt);
  muster__prov_verr(cc->err, cc->errlen, code, who, fmt, ap);
  va_end(ap);
  return code;
}

/* ---- before anything collective: what this rank can check alone ------------- */

/* The bootstrap must be MPI, and MPI running: without them no rank can
 * even agree, so these return at once (the runtime hands every rank of a
 * call the same kind of bootstrap, so they all return here together). */
static int check_boot(const sl_call_t *s) {
  const muster_bootstrap_t *b = s->cc->boot;
  if (!b || !b->allgather || b->size < 1 || b->rank < 0 || b->rank >= b->size)
    return sl_err(s, MUSTER_EINVAL, "no usable bootstrap (rank, size or allgather missing)");
  if (!b->kind || strcmp(b->kind, "mpi") != 0 || !b->mpi_comm)
    return sl_err(s, MUSTER_EUNSUPPORTED,
                  "needs the MPI bootstrap (kind \"mpi\" with an MPI_Comm), got kind \"%s\"",
                  b->kind ? b->kind : "(null)");
  if (!sl_mpi_usable())
    return sl_err(s, MUSTER_EUNSUPPORTED,
                  "MPI is not initialized in this process (or already finalized): the "
                  "provider runs on the MPI its caller started");
  return 0;
}

static int bad(sl_verdict_t *v, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(sl_verdict_t *v, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->what, sizeof v->what, fmt, ap);
  va_end(ap);
  v->code = code;
  v->order = SL_ORDER_ARGS;
  return code;
}

static int check_args(const sl_call_t *s, sl_verdict_t *v) {
  const muster_solve_args_t *a = s->args;
  if (a->routine < 1 || a->routine >= MUSTER_ROUTINE_END || !(ALL_ROUTINES & (1u << a->routine)))
    return bad(v, MUSTER_EUNSUPPORTED, "routine %d not implemented", (int)a->routine);
  if (a->dtype < MUSTER_F32 || a->dtype > MUSTER_C128)
    return bad(v, MUSTER_EUNSUPPORTED, "dtype %d not implemented", (int)a->dtype);
  /* ScaLAPACK's integers are 32 bits (Debian's LP64 build) */
  if (a->n < 1 || a->n > INT_MAX) return bad(v, MUSTER_EINVAL, "n=%" PRId64 " out of range", a->n);
  if (sl_takes_b(s) && (a->nrhs < 1 || a->nrhs > INT_MAX))
    return bad(v, MUSTER_EINVAL, "nrhs=%" PRId64 " out of range", a->nrhs);
  if ((a->flags & MUSTER_LOGDET) && a->routine != MUSTER_POTRS)
    return bad(v, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs only");
  if (a->tile < 0 || a->tile > INT_MAX)
    return bad(v, MUSTER_ETILE, "tile %" PRId64 " out of range (0: the provider's choice)",
               a->tile);
  return 0;
}

static int check_piece(sl_call_t *s, sl_verdict_t *v) {
  const muster_shard_t *me = s->cc->mine;
  const muster_dist_t *d = &s->cc->dist;
  int64_t n = s->args->n;
  muster_shape_t sh;
  int comm_rank = -1, comm_size = -1;
  MPI_Comm comm = *(MPI_Comm *)s->cc->boot->mpi_comm;
  MPI_Comm_rank(comm, &comm_rank);
  MPI_Comm_size(comm, &comm_size);
  if (comm_rank != s->rank || comm_size != s->size)
    return bad(v, MUSTER_EINVAL, "bootstrap rank %d of %d is rank %d of %d in its MPI_Comm",
               s->rank, s->size, comm_rank, comm_size);
  if (!me || me->mem != MUSTER_MEM_HOST)
    return bad(v, MUSTER_EUNSUPPORTED, "the piece is not host memory");
  if (muster_routine_shape(s->args->routine, n, s->args->nrhs, me->ldb, &sh) != 0 ||
      sh.a_rows > INT_MAX)
    return bad(v, MUSTER_EINVAL, "gels needs m = ldb with n <= m <= INT_MAX, ldb is %" PRId64,
               me->ldb);
  s->m = sh.a_rows;
  if (d->m != s->m || d->n != n || d->mb < 1 || d->nb < 1 || d->mb > INT_MAX || d->nb > INT_MAX)
    return bad(v, MUSTER_EINVAL,
               "dist %" PRId64 " x %" PRId64 " in %" PRId64 " x %" PRId64
               " blocks does not describe the %" PRId64 " x %" PRId64 " A",
               d->m, d->n, d->mb, d->nb, s->m, n);
  if (d->nprow < 1 || d->npcol < 1 || (int64_t)d->nprow * d->npcol != s->size || d->myrow < 0 ||
      d->myrow >= d->nprow || d->mycol < 0 || d->mycol >= d->npcol ||
      d->myrow * d->npcol + d->mycol != s->rank)
    return bad(v, MUSTER_EINVAL,
               "dist places rank %d at (%d, %d) of a %d x %d grid (ranks go "
               "row-major over the grid, which must hold all %d)",
               s->rank, d->myrow, d->mycol, d->nprow, d->npcol, s->size);
  int64_t rows = muster_layout_numroc(s->m, d->mb, d->myrow, d->nprow);
  int64_t cols = muster_layout_numroc(n, d->nb, d->mycol, d->npcol);
  if (d->lld < (rows > 1 ? rows : 1) || d->lld > INT_MAX)
    return bad(v, MUSTER_EINVAL, "lld %" PRId64 " < %" PRId64 " local rows", d->lld, rows);
  if (rows * cols > 0 && !me->a) return bad(v, MUSTER_EINVAL, "A is null");
  if (sl_takes_b(s) && (!me->b || me->ldb < sh.b_rows || me->ldb > INT_MAX))
    return bad(v, MUSTER_EINVAL, "B is null or ldb %" PRId64 " < %" PRId64 " rows", me->ldb,
               sh.b_rows);
  if (s->args->routine == MUSTER_SYEVD && !me->w)
    return bad(v, MUSTER_EINVAL, "W (eigenvalues) is null");
  if ((s->args->flags & MUSTER_LOGDET) && !me->w)
    return bad(v, MUSTER_EINVAL, "W (log det A, with MUSTER_LOGDET) is null");
  return 0;
}

/* Grid, tile and this rank's place (what the ranks must agree on). */
static int plan(sl_call_t *s, sl_verdict_t *v) {
  char why[160];
  if (sl_grid_shape(s->size, &s->nprow, &s->npcol, why, sizeof why) < 0)
    return bad(v, MUSTER_EINVAL, "%s", why);
  s->myrow = s->rank / s->npcol;
  s->mycol = s->rank % s->npcol;
  s->tile = s->args->tile > 0
                ? s->args->tile
                : sl_auto_tile(s->args->routine, s->t, s->args->n, s->nprow, s->npcol);
  s->planned = 1;
  return 0;
}

/* This rank's pieces on the provider's grid. */
static int allocate(sl_call_t *s, sl_verdict_t *v) {
  int64_t n = s->args->n;
  if (sl_mat_alloc(s, &s->A, s->m, n) < 0 ||
      (sl_takes_b(s) && sl_mat_alloc(s, &s->B, s->m, s->args->nrhs) < 0) ||
      (sl_needs_z(s->args) && sl_mat_alloc(s, &s->Z, n, n) < 0) ||
      (s->args->routine == MUSTER_SYEVD && !(s->w = calloc((size_t)n, sizeof(double)))))
    return bad(v, MUSTER_ENOMEM, "cannot allocate the %d x %d grid's pieces (tile %" PRId64 ")",
               s->nprow, s->npcol, s->tile);
  return 0;
}

/* NaN/Inf in what the routine reads of this rank's piece of A (the lower
 * triangle of a Hermitian A, all of a general one), or in B (rank 0's copy). */
static void check_inputs(const sl_call_t *s, sl_verdict_t *v) {
  int64_t i, j;
  if (sl_caller_nonfinite(s, !general(s), &i, &j)) {
    bad(v, MUSTER_ENONFINITE,
        "NaN/Inf in A at row %" PRId64 ", column %" PRId64 " (rank %d's piece)", i, j, s->rank);
    v->order = SL_ORDER_NAN_A;
    v->row = i;
    v->col = j;
    return;
  }
  const muster_shard_t *me = s->cc->mine;
  if (sl_takes_b(s) && s->rank == 0 &&
      muster__find_nonfinite(s->t, me->b, me->ldb, s->m, s->args->nrhs, 0, &i, &j)) {
    bad(v, MUSTER_ENONFINITE, "NaN/Inf in B at row %" PRId64 ", column %" PRId64 " (rank 0)", i, j);
    v->order = SL_ORDER_NAN_B;
    v->row = i;
    v->col = j;
  }
}

/* ---- after the routine -------------------------------------------------------------- */

/* A NaN/Inf result is an error, never a success (as in the lapack provider). */
static int check_result(sl_call_t *s) {
  sl_verdict_t v = {.code = 0, .row = -1, .col = -1};
  int64_t i = -1, j = -1;
  const char *what = NULL;
  int64_t n = s->args->n;
  if (sl_takes_b(s)) { /* X: B's first n rows */
    if (sl_find_nonfinite(s, &s->B, 0, n, &i, &j)) what = "X";
  } else if (s->args->routine == MUSTER_POTRI) {
    if (sl_find_nonfinite(s, &s->A, 0, n, &i, &j)) what = "inverse";
  } else {
    muster_dtype_t real = muster_dtype_real_bytes(s->t) == 4 ? MUSTER_F32 : MUSTER_F64;
    if (muster__find_nonfinite(real, s->w, n, n, 1, 0, &i, &j))
      what = "eigenvalues";
    else if (!(s->args->flags & MUSTER_NO_VECTORS) && sl_find_nonfinite(s, &s->Z, 0, n, &i, &j))
      what = "eigenvectors";
  }
  if (what) {
    bad(&v, MUSTER_ENONFINITE,
        "NaN/Inf in the result %s at row %" PRId64 ", column %" PRId64
        " (input too ill-conditioned?)",
        what, i, j);
    v.order = SL_ORDER_RESULT;
    v.row = i;
    v.col = j;
  }
  return sl_agree(s, &v, 0);
}

/* Only now, with every rank's success agreed, into the caller's buffers. */
static void write_back(sl_call_t *s) {
  const muster_solve_args_t *a = s->args;
  if (general(s)) {
    sl_gather_x(s); /* A stays as it was (muster.h) */
  } else if (a->routine == MUSTER_POTRS) {
    if (!(a->flags & MUSTER_NO_FACTOR)) sl_gather_result(s, &s->A);
    sl_gather_x(s);
    if (a->flags & MUSTER_LOGDET) {
      float f = (float)s->logdet;
      int single = muster_dtype_real_bytes(s->t) == 4;
      memcpy(s->cc->mine->w, single ? (const void *)&f : (const void *)&s->logdet, single ? 4 : 8);
    }
  } else if (a->routine == MUSTER_POTRI) {
    sl_gather_result(s, &s->A);
  } else {
    if (!(a->flags & MUSTER_NO_VECTORS)) sl_gather_result(s, &s->Z);
    memcpy(s->cc->mine->w, s->w, (size_t)a->n * muster_dtype_real_bytes(s->t));
  }
}

/* ---- collective_solve ------------------------------------------------------------------ */

/* The contexts of this call, cached per (bootstrap key, grid). */
static int contexts(sl_ctx_t *c, sl_call_t *s, unsigned stamp) {
  char why[200] = "";
  int rc = sl_comm_get(c, s->cc->boot, &s->comm, why, sizeof why);
  if (rc < 0) return sl_err(s, rc, "%s", why);
  const muster_dist_t *d = &s->cc->dist;
  s->line_ctxt = sl_comm_grid(s->comm, 1, s->size, stamp);
  s->caller_ctxt = sl_comm_grid(s->comm, d->nprow, d->npcol, stamp);
  s->ctxt = sl_comm_grid(s->comm, s->nprow, s->npcol, stamp);
  s->root_ctxt = sl_takes_b(s) ? sl_comm_grid(s->comm, 1, 1, stamp) : -1;
  sl_int p = 0, q = 0, r = -1, col = -1;
  Cblacs_gridinfo(s->ctxt, &p, &q, &r, &col);
  if (p != s->nprow || q != s->npcol || r != s->myrow || col != s->mycol)
    return sl_err(s, MUSTER_EPROVIDER,
                  "BLACS placed this rank at (%d, %d) of %d x %d, expected "
                  "(%d, %d) of %d x %d",
                  (int)r, (int)col, (int)p, (int)q, s->myrow, s->mycol, s->nprow, s->npcol);
  sl_mat_bind(s, &s->A);
  sl_mat_bind(s, &s->B);
  sl_mat_bind(s, &s->Z);
  return 0;
}

static int solve_locked(sl_ctx_t *c, sl_call_t *s, unsigned stamp) {
  sl_verdict_t v = {.code = 0, .row = -1, .col = -1};
  if (check_args(s, &v) == 0 && plan(s, &v) == 0 && check_piece(s, &v) == 0 && allocate(s, &v) == 0)
    check_inputs(s, &v);
  s->cached = sl_comm_cached(c, s->cc->boot);
  int rc = sl_agree(s, &v, 1);
  /* Some ranks had released this key's communicators (release_comms is
   * meant for every rank): this call fails with MUSTER_EMISMATCH, and the
   * ranks that still hold them drop them too (a local release in Open MPI),
   * so the next call starts from the same state everywhere. */
  if (s->cache_split) sl_comm_release(c, s->cc->boot->key);
  if (rc == 0) rc = contexts(c, s, stamp);
  if (rc == 0) {
    sl_scatter_inputs(s);
    rc = sl_run(s);
  }
  if (rc == 0) rc = check_result(s);
  if (rc == 0) write_back(s);
  return rc;
}

/* ---- the calls cancel may act on -------------------------------------------------------- */

/* Register cc as inside collective_solve; its slot, or -1 when all
 * SL_MAX_LIVE are taken (that call then cannot be cancelled: it waits for
 * the lock behind 64 others). */
static int live_enter(sl_ctx_t *c, const muster_collective_call_t *cc, int rank) {
  int slot = -1;
  pthread_mutex_lock(&c->live_lock);
  for (int i = 0; i < SL_MAX_LIVE && slot < 0; i++)
    if (!c->live[i]) {
      c->live[i] = cc;
      c->live_rank[i] = rank;
      slot = i;
    }
  pthread_mutex_unlock(&c->live_lock);
  return slot;
}

static void live_leave(sl_ctx_t *c, int slot) {
  if (slot < 0) return;
  pthread_mutex_lock(&c->live_lock);
  c->live[slot] = NULL;
  pthread_mutex_unlock(&c->live_lock);
}

/* The bootstrap rank of call cc if it is inside collective_solve, else -1. */
static int live_rank(sl_ctx_t *c, const muster_collective_call_t *cc) {
  int rank = -1;
  pthread_mutex_lock(&c->live_lock);
  for (int i = 0; i < SL_MAX_LIVE && rank < 0; i++)
    if (cc && c->live[i] == cc) rank = c->live_rank[i];
  pthread_mutex_unlock(&c->live_lock);
  return rank;
}

static int sl_collective_solve(void *ctx, const muster_collective_call_t *cc) {
  sl_ctx_t *c = ctx;
  if (!c || !cc) return MUSTER_EINVAL;
  int64_t info_sink = 0;
  sl_call_t s = {
      .cc = cc, .args = &cc->args, .t = cc->args.dtype, .info = cc->info ? cc->info : &info_sink};
  *s.info = 0;
  if (cc->tile_used) *cc->tile_used = 0;
  if (cc->boot) {
    s.rank = cc->boot->rank;
    s.size = cc->boot->size;
  }
  int rc = check_boot(&s);
  if (rc < 0) return rc;
  if (s.t >= MUSTER_F32 && s.t <= MUSTER_C128) {
    s.k = sl_kind(s.t);
    s.esz = muster_dtype_bytes(s.t);
  }
  int slot = live_enter(c, cc, s.rank);
  pthread_mutex_lock(&c->lock);
  unsigned stamp = ++c->calls;
  rc = solve_locked(c, &s, stamp);
  if (cc->tile_used) *cc->tile_used = s.planned ? s.tile : 0;
  pthread_mutex_unlock(&c->lock);
  live_leave(c, slot);
  sl_mat_free(&s.A);
  sl_mat_free(&s.B);
  sl_mat_free(&s.Z);
  free(s.w);
  return rc;
}

/* ---- the other hooks -------------------------------------------------------------------- */

static int sl_probe(char *why, size_t whylen) {
  /* ScaLAPACK and MPI are linked in: if this .so loaded, they did.  Whether
   * MPI runs is a question for each call (estimate, collective_solve). */
  if (why && whylen) why[0] = '\0';
  return 0;
}

static int sl_init(void **ctx, char *err, size_t errlen) {
  sl_ctx_t *c = calloc(1, sizeof *c);
  if (!c) {
    if (err && errlen) snprintf(err, errlen, "scalapack: cannot allocate context");
    return MUSTER_ENOMEM;
  }
  int rc = pthread_mutex_init(&c->lock, NULL);
  if (!rc && (rc = pthread_mutex_init(&c->live_lock, NULL)) != 0) pthread_mutex_destroy(&c->lock);
  if (rc) {
    free(c);
    if (err && errlen) snprintf(err, errlen, "scalapack: pthread_mutex_init: %s", strerror(rc));
    return MUSTER_ESYS;
  }
  *ctx = c;
  return 0;
}

static void sl_release_comms(void *ctx, uint64_t key) {
  sl_ctx_t *c = ctx;
  if (!c) return;
  pthread_mutex_lock(&c->lock);
  sl_comm_release(c, key);
  pthread_mutex_unlock(&c->lock);
}

static void sl_fini(void *ctx) {
  sl_ctx_t *c = ctx;
  if (!c) return;
  sl_comm_release(c, 0);
  pthread_mutex_destroy(&c->live_lock);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* A peer died or stopped while call `cc` may be blocked inside an MPI call
 * of ScaLAPACK, which nothing can interrupt (Open MPI 4 has no
 * communicator revoke).  The only way out that ends every rank is to abort
 * the MPI job: mpirun then kills every process of it.  This is the one
 * place the provider ends its process, on the runtime's request; it says
 * why on stderr first, and the errorcode mpirun reports is -code.  A cancel
 * of a call that is not inside collective_solve (it returned already, or
 * never came) does nothing. */
static void sl_cancel(void *ctx, const muster_collective_call_t *cc, int code, const char *why) {
  sl_ctx_t *c = ctx;
  int rank = c ? live_rank(c, cc) : -1;
  if (rank < 0 || !sl_mpi_usable()) return;
  char host[64] = "?", msg[512];
  gethostname(host, sizeof host - 1);
  int len =
      snprintf(msg, sizeof msg,
               "muster scalapack: rank %d (pid %d on %s): %s (muster code %d): aborting "
               "the MPI job (MPI_Abort, errorcode %d)\n",
               rank, (int)getpid(), host, why ? why : "cancelled", code, code < 0 ? -code : 1);
  if (len > 0) (void)!write(2, msg, (size_t)len < sizeof msg ? (size_t)len : sizeof msg - 1);
  MPI_Abort(MPI_COMM_WORLD, code < 0 ? -code : 1);
}

__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION,
    .kind = MUSTER_PROVIDER_COLLECTIVE,
    .name = "scalapack",
    .description =
        "CPU, any number of nodes: ScaLAPACK (Open MPI) on a P x Q BLACS grid from "
        "the MPI bootstrap",
    .priority = 5,
    .routines = ALL_ROUTINES | MUSTER_CAP_LOGDET,
    .dtypes = MUSTER_ALL_DTYPES,
    .mem_kinds = 1u << MUSTER_MEM_HOST,
    /* THREADS for one rank (the runtime's span of a 1-rank call); more
     * ranks as threads of one process are refused by estimate */
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES | MUSTER_SPAN_NODES,
    .max_shards = 0,
    .probe = sl_probe,
    .init = sl_init,
    .fini = sl_fini,
    .estimate = sl_estimate,
    .choose_tile = NULL,
    .solve = NULL,
    .local_export = NULL,
    .leader_import = NULL,
    .forget_peer = NULL,
    .collective_solve = sl_collective_solve,
    .cancel = sl_cancel,
    .release_comms = sl_release_comms,
};
