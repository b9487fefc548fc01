/* tools/muster/solve_mpi.c - see solve_mpi.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "muster/layout.h"
#include "solve_mpi.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char last_msg[1024]; /* the CLI's one thread of MPI work */

const char *sm_last_error(void) { return last_msg; }

/* Record the failure of a step (what sm_last_error then says); returns rc. */
static int sm_err(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sm_err(int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_msg, sizeof last_msg, fmt, ap);
  va_end(ap);
  return rc;
}

int sm_open(sm_job_t *j) {
  memset(j, 0, sizeof *j);
  muster_comm_opts_t o = {.kind = "mpi", .name = "cli"};
  int rc = muster_comm_open(&o, &j->comm);
  if (rc < 0) return sm_err(rc, "%s", muster_last_error());
  j->rank = muster_comm_rank(j->comm);
  j->size = muster_comm_size(j->comm);
  return 0;
}

void sm_close(sm_job_t *j) {
  if (j->comm) muster_comm_close(j->comm);
  j->comm = NULL;
}

int sm_finish(void) {
  int rc = muster_mpi_finish();
  return rc < 0 ? sm_err(rc, "%s", muster_last_error()) : 0;
}

void sm_end(int rc) {
  if (rc != MUSTER_ETIMEDOUT) return;
  fflush(NULL);
  _exit(1);
}

/* The CLI's own allgather, over the solve's comm (between its solves: the
 * comm serves one call at a time). */
static int gather(sm_job_t *j, const void *mine, void *all, size_t len, const char *what) {
  int rc = muster_comm_allgather(j->comm, mine, all, len, what);
  return rc < 0 ? sm_err(rc, "muster solve: %s", muster_last_error()) : 0;
}

int sm_agree_seed(sm_job_t *j, uint64_t *seed) {
  uint64_t *all = malloc((size_t)j->size * sizeof *all);
  if (!all) return sm_err(MUSTER_ENOMEM, "muster solve: rank %d: out of memory", j->rank);
  int rc = gather(j, seed, all, sizeof *seed, "sharing rank 0's seed");
  if (rc == 0) *seed = all[0];
  free(all);
  return rc;
}

/* FNV-1a: do the ranks' replicated results agree bit for bit? */
static uint64_t hash(const void *p, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; p && i < len; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
  return h;
}

/* The hash of X: B's first n rows of each of its nrhs columns (ld rows;
 * gels's rows n .. m-1 are the provider's scratch, muster.h). */
static uint64_t hash_x(const void *b, int64_t n, int64_t ld, int64_t nrhs, size_t esz) {
  uint64_t h = 0;
  for (int64_t c = 0; b && c < nrhs; c++) h = h * 31 + hash((const char *)b + (size_t)(c * ld) * esz, (size_t)n * esz);
  return h;
}

/* One rank's word after its solves. */
typedef struct verdict {
  int32_t rc, pad_;
  uint64_t hb, hw; /* hashes of its b and w */
  char msg[600];
} verdict_t;

/* This rank's piece of the job: its column block of A, a copy of B, room for W. */
typedef struct piece {
  muster_shard_t s;
  muster_layout_geom_t L; /* block layout: L.tile 1 */
  size_t a_bytes, b_bytes, w_bytes;
} piece_t;

static int piece_alloc(sm_job_t *j, const sr_spec_t *spec, int64_t nrhs, piece_t *p) {
  int64_t n = spec->n, rows = sr_rows(spec);
  size_t esz = muster_dtype_size(spec->dtype);
  muster_layout_geom_t *L = &p->L;
  memset(p, 0, sizeof *p);
  if (muster_layout_geom_init(L, n, 1, j->size) != 0)
    return sm_err(MUSTER_EINVAL, "muster solve: n %lld over %d ranks", (long long)n, j->size);
  p->s.mem = MUSTER_MEM_HOST;
  p->s.device = -1;
  p->s.lda = p->s.ldb = rows; /* gels: m travels in ldb (muster.h) */
  p->s.col0 = muster_layout_block_col0(L, j->rank);
  p->s.ncols = muster_layout_block_ncols(L, j->rank);
  p->a_bytes = (size_t)(rows * L->block_cols) * esz; /* every rank's the same: one allgather */
  p->b_bytes = muster_routine_takes(spec->routine) & MUSTER_TAKES_B ? (size_t)(rows * nrhs) * esz : 0;
  /* the reals the solve writes (syevd's eigenvalues, potrs's log det): what is hashed */
  p->w_bytes = (size_t)(spec->routine == MUSTER_SYEVD ? n : (spec->flags & MUSTER_LOGDET) ? 1 : 0) *
               muster_dtype_real_size(spec->dtype);
  p->s.a = calloc(1, p->a_bytes);
  p->s.b = p->b_bytes ? malloc(p->b_bytes) : NULL;
  p->s.w = p->w_bytes ? calloc(1, p->w_bytes) : NULL;
  if (!p->s.a || (p->b_bytes && !p->s.b) || (p->w_bytes && !p->s.w))
    return sm_err(MUSTER_ENOMEM, "muster solve: rank %d (pid %d): cannot allocate its piece "
                       "(%zu bytes of A)", j->rank, (int)getpid(), p->a_bytes);
  return 0;
}

static void piece_free(piece_t *p) {
  free(p->s.a);
  free(p->s.b);
  free(p->s.w);
}

/* The inputs again: the solve overwrote them. */
static void piece_fill(const sr_spec_t *spec, piece_t *p, const void *A, const void *B) {
  size_t esz = muster_dtype_size(spec->dtype);
  int64_t rows = sr_rows(spec);
  memcpy(p->s.a, (const char *)A + (size_t)(p->s.col0 * rows) * esz, (size_t)(p->s.ncols * rows) * esz);
  if (p->s.b) memcpy(p->s.b, B, p->b_bytes);
}

/* Share every rank's verdict: out gets the first failing rank's (rc and
 * message), disagree when the codes differ, *xsame when every hash equals
 * rank 0's. */
static int agree(sm_job_t *j, const verdict_t *mine, sr_out_t *out, int *xsame) {
  verdict_t *all = malloc((size_t)j->size * sizeof *all);
  if (!all) return sm_err(MUSTER_ENOMEM, "muster solve: rank %d: out of memory", j->rank);
  int rc = gather(j, mine, all, sizeof *mine, "sharing the ranks' results");
  *xsame = rc == 0;
  for (int r = 0; rc == 0 && r < j->size; r++) {
    all[r].msg[sizeof all[r].msg - 1] = '\0';
    if (all[r].rc != all[0].rc) out->disagree = 1;
    if (all[r].hb != all[0].hb || all[r].hw != all[0].hw) *xsame = 0;
    if (all[r].rc < 0 && out->rc == 0) {
      out->rc = all[r].rc;
      snprintf(out->msg, sizeof out->msg, "%s", all[r].msg);
    }
  }
  free(all);
  return rc;
}

/* warmup + reps solves of the piece; rank 0's times into out. */
static int solve_reps(sm_job_t *j, const sr_spec_t *spec, piece_t *p, const void *A, const void *B,
                      sr_out_t *out) {
  muster_solve_args_t args = {.routine = spec->routine, .dtype = spec->dtype, .n = spec->n,
                              .nrhs = spec->nrhs, .tile = spec->tile, .layout = MUSTER_LAYOUT_BLOCK,
                              .flags = spec->flags, .provider = spec->provider};
  for (int i = 0; i < spec->warmup + spec->reps; i++) {
    char one = 1, *ones = malloc((size_t)j->size);
    piece_fill(spec, p, A, B);
    int rc = ones ? gather(j, &one, ones, 1, "meeting before a solve") /* a barrier */
                  : sm_err(MUSTER_ENOMEM, "muster solve: rank %d: out of memory", j->rank);
    free(ones);
    if (rc < 0) return rc;
    double t0 = now_s();
    rc = muster_solve_comm(j->comm, &args, &p->s, &out->res);
    if (rc < 0) return sm_err(rc, "%s", muster_last_error());
    if (i >= spec->warmup) {
      out->seconds[i - spec->warmup] = now_s() - t0;
      out->provider_seconds[i - spec->warmup] = out->res.seconds;
    }
  }
  return 0;
}

int sm_run(sm_job_t *j, const sr_spec_t *spec, const void *A, const void *B, sr_out_t *out, void *full,
           void *X, void *W, int *xsame) {
  memset(out, 0, sizeof *out);
  for (int r = 0; r < MUSTER_MAX_RANKS; r++) out->devices[r] = -1;
  int64_t rows = sr_rows(spec), nrhs = muster_routine_takes(spec->routine) & MUSTER_TAKES_B ? spec->nrhs : 1;
  piece_t p;
  memset(&p, 0, sizeof p);
  verdict_t v;
  memset(&v, 0, sizeof v);
  /* every rank ready before any enters a solve: one that is not would
   * leave the others in the solve's first round */
  if (!A) v.rc = sm_err(MUSTER_ENOMEM, "muster solve: rank %d (pid %d): no memory for the matrix",
                             j->rank, (int)getpid());
  else v.rc = piece_alloc(j, spec, nrhs, &p);
  if (v.rc < 0) snprintf(v.msg, sizeof v.msg, "%s", sm_last_error());
  int rc = agree(j, &v, out, xsame);
  if (rc == 0 && out->rc == 0) {
    if ((v.rc = solve_reps(j, spec, &p, A, B, out)) < 0) {
      snprintf(v.msg, sizeof v.msg, "%s", sm_last_error());
    } else {
      v.hb = hash_x(p.s.b, spec->n, rows, nrhs, muster_dtype_bytes(spec->dtype));
      v.hw = hash(p.s.w, p.w_bytes);
    }
    rc = agree(j, &v, out, xsame);
  }
  /* the result blocks, for rank 0's check of the whole of it */
  int vectors = spec->routine == MUSTER_POTRI ||
                (spec->routine == MUSTER_SYEVD && !(spec->flags & MUSTER_NO_VECTORS));
  if (rc == 0 && out->rc == 0 && vectors) {
    char *all = malloc(p.a_bytes * (size_t)j->size);
    rc = all ? gather(j, p.s.a, all, p.a_bytes, "gathering the result's blocks")
             : sm_err(MUSTER_ENOMEM, "muster solve: rank %d: no memory to gather the result", j->rank);
    if (rc == 0 && j->rank == 0 && full) {
      size_t esz = muster_dtype_size(spec->dtype);
      for (int r = 0; r < j->size; r++)
        memcpy((char *)full + (size_t)(muster_layout_block_col0(&p.L, r) * rows) * esz,
               all + (size_t)r * p.a_bytes, (size_t)(muster_layout_block_ncols(&p.L, r) * rows) * esz);
    }
    free(all);
  }
  if (rc == 0 && out->rc == 0 && j->rank == 0) {
    if (X && p.s.b) memcpy(X, p.s.b, p.b_bytes);
    if (W && p.s.w) memcpy(W, p.s.w, p.w_bytes);
  }
  piece_free(&p);
  return rc;
}
