/* tools/muster/solve_mpi.c - see solve_mpi.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "choose.h"
#include "muster/layout.h"
#include "solve_mpi.h"
#include "muster/clock.h"

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
  if (gethostname(j->host, sizeof j->host - 1) != 0) snprintf(j->host, sizeof j->host, "?");
  muster_comm_opts_t o = {.kind = "mpi", .name = "cli"};
  int rc = muster_comm_open(&o, &j->comm);
  if (rc < 0) return sm_err(rc, "%s", muster_last_error());
  j->rank = muster_comm_rank(j->comm);
  j->size = muster_comm_size(j->comm);
  snprintf(j->who, sizeof j->who, "rank %d (pid %d on %.64s)", j->rank, (int)getpid(), j->host);
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

/* The launcher's word for this process's local rank, -1 when it says
 * none (Open MPI, srun, MPICH's hydra, PMIx-style PMI). */
static int launcher_local_rank(void) {
  static const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    char *end;
    long l = v && *v ? strtol(v, &end, 10) : -1;
    if (v && *v && !*end && l >= 0 && l < MUSTER_MAX_RANKS) return (int)l;
  }
  return -1;
}

typedef struct hostname {
  char s[sizeof ((sm_job_t *)0)->host];
} hostname_t;

int sm_place(sm_job_t *j) {
  hostname_t mine, *all = malloc((size_t)j->size * sizeof *all);
  if (!all) return sm_err(MUSTER_ENOMEM, "muster solve: rank %d: out of memory", j->rank);
  memset(&mine, 0, sizeof mine);
  snprintf(mine.s, sizeof mine.s, "%s", j->host);
  int rc = gather(j, &mine, all, sizeof mine, "sharing the ranks' host names");
  j->nodes = 0;
  j->local = 0;
  for (int r = 0; rc == 0 && r < j->size; r++) {
    int first = 1; /* the first rank on its host */
    for (int k = 0; k < r && first; k++) first = strncmp(all[k].s, all[r].s, sizeof mine.s) != 0;
    j->nodes += first;
    j->local += r < j->rank && !strncmp(all[r].s, mine.s, sizeof mine.s);
  }
  free(all);
  int l = launcher_local_rank();
  if (l >= 0) j->local = l;
  return rc;
}

int sm_memory(sm_job_t *j, sr_spec_t *spec) {
  char name[32], reason[64], why[sizeof j->unready - sizeof j->who - 4]; /* name, reason: not shown */
  int cuda = 0;
  spec->nodes = j->nodes;
  if (cli_choose_memory(spec, &cuda, name, sizeof name, reason, sizeof reason, why, sizeof why) < 0)
    snprintf(j->unready, sizeof j->unready, "%s: %s", j->who, why);
  int32_t mine = cuda, *all = malloc((size_t)j->size * sizeof *all);
  if (!all) return sm_err(MUSTER_ENOMEM, "muster solve: rank %d: out of memory", j->rank);
  int rc = gather(j, &mine, all, sizeof mine, "sharing rank 0's memory kind");
  if (rc == 0) spec->cuda = all[0] != 0;
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

/* One rank's word: before a solve (is it ready?) and after its solves. */
typedef struct verdict {
  int32_t rc, device; /* device: its GPU, -1 host */
  uint64_t hb, hw;    /* hashes of its b and w */
  char msg[600];
} verdict_t;

/* Every rank's verdict into *all (j->size entries, to free); 0 or a code. */
static int verdicts(sm_job_t *j, const verdict_t *mine, verdict_t **all, const char *what) {
  *all = malloc((size_t)j->size * sizeof **all);
  if (!*all) return sm_err(MUSTER_ENOMEM, "muster solve: rank %d: out of memory", j->rank);
  int rc = gather(j, mine, *all, sizeof *mine, what);
  for (int r = 0; rc == 0 && r < j->size; r++) (*all)[r].msg[sizeof (*all)[r].msg - 1] = '\0';
  return rc;
}

/* Share every rank's verdict: out gets the first failing rank's (rc and
 * message) and every rank's device, disagree when the codes differ, *xsame
 * when every hash equals rank 0's. */
static int agree(sm_job_t *j, const verdict_t *mine, sr_out_t *out, int *xsame) {
  verdict_t *all;
  int rc = verdicts(j, mine, &all, "sharing the ranks' results");
  *xsame = rc == 0;
  for (int r = 0; rc == 0 && r < j->size; r++) {
    out->devices[r] = all[r].device;
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

/* The meeting before a solve (a barrier that carries each rank's word: a
 * rank whose piece could not be refilled stops every rank, with its
 * message).  rc: this rank's, why its message.  0 when every rank is
 * ready, else the first failing rank's code (its message in sm_last_error). */
static int meet(sm_job_t *j, int rc, const char *why) {
  verdict_t mine, *all;
  memset(&mine, 0, sizeof mine);
  mine.rc = rc;
  snprintf(mine.msg, sizeof mine.msg, "%s", rc ? why : "");
  int grc = verdicts(j, &mine, &all, "meeting before a solve");
  for (int r = 0; grc == 0 && r < j->size; r++)
    if (all[r].rc < 0) {
      grc = sm_err(all[r].rc, "%s", all[r].msg);
      break;
    }
  free(all);
  return grc;
}

/* warmup + reps solves of the piece; rank 0's times into out. */
static int solve_reps(sm_job_t *j, const sr_spec_t *spec, piece_t *p, const void *A, const void *B,
                      sr_out_t *out) {
  muster_solve_args_t args = {.routine = spec->routine, .dtype = spec->dtype, .n = spec->n,
                              .nrhs = spec->nrhs, .tile = spec->tile, .layout = MUSTER_LAYOUT_BLOCK,
                              .flags = spec->flags, .provider = spec->provider};
  for (int i = 0; i < spec->warmup + spec->reps; i++) {
    char why[600] = "";
    int rc = piece_fill(spec, p, A, B, j->who, why, sizeof why); /* not timed */
    if ((rc = meet(j, rc, why)) < 0) return rc;
    double t0 = muster_clock_s();
    rc = muster_solve_comm(j->comm, &args, &p->s, &out->res);
    if (rc < 0) return sm_err(rc, "%s", muster_last_error());
    if (i >= spec->warmup) {
      out->seconds[i - spec->warmup] = muster_clock_s() - t0;
      out->provider_seconds[i - spec->warmup] = out->res.seconds;
    }
  }
  return 0;
}

/* Whether this rank can take part: its inputs (A NULL: no memory for
 * them), its choice of memory (j->unready), its piece.  0, or a code with
 * the message in v->msg. */
static int ready(sm_job_t *j, const sr_spec_t *spec, const void *A, int64_t nrhs, piece_t *p, verdict_t *v) {
  if (j->unready[0]) {
    snprintf(v->msg, sizeof v->msg, "%s", j->unready);
    return MUSTER_ENOPROVIDER;
  }
  if (!A) {
    snprintf(v->msg, sizeof v->msg, "%s: no memory for the matrix", j->who);
    return MUSTER_ENOMEM;
  }
  int rc = piece_alloc(spec, nrhs, j->rank, j->size, j->local, j->who, p, v->msg, sizeof v->msg);
  v->device = p->s.device;
  return rc;
}

/* The result blocks, for rank 0's check of the whole of it (potri, syevd
 * with vectors): 0 or a code. */
static int gather_blocks(sm_job_t *j, const sr_spec_t *spec, const piece_t *p, void *full) {
  int64_t rows = sr_rows(spec);
  char *all = malloc(p->a_bytes * (size_t)j->size);
  int rc = all ? gather(j, p->a, all, p->a_bytes, "gathering the result's blocks")
               : sm_err(MUSTER_ENOMEM, "muster solve: rank %d: no memory to gather the result", j->rank);
  if (rc == 0 && j->rank == 0 && full) {
    size_t esz = muster_dtype_size(spec->dtype);
    for (int r = 0; r < j->size; r++)
      memcpy((char *)full + (size_t)(muster_layout_block_col0(&p->L, r) * rows) * esz,
             all + (size_t)r * p->a_bytes, (size_t)(muster_layout_block_ncols(&p->L, r) * rows) * esz);
  }
  free(all);
  return rc;
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
  v.device = -1;
  /* every rank ready before any enters a solve: one that is not would
   * leave the others in the solve's first round */
  v.rc = ready(j, spec, A, nrhs, &p, &v);
  int rc = agree(j, &v, out, xsame);
  if (rc == 0 && out->rc == 0) {
    if ((v.rc = solve_reps(j, spec, &p, A, B, out)) < 0) {
      snprintf(v.msg, sizeof v.msg, "%s", sm_last_error());
    } else if ((v.rc = piece_collect(&p, j->who, v.msg, sizeof v.msg)) == 0) {
      v.hb = hash_x(p.b, spec->n, rows, nrhs, muster_dtype_bytes(spec->dtype));
      v.hw = hash(p.w, p.w_bytes);
    }
    rc = agree(j, &v, out, xsame);
  }
  int vectors = spec->routine == MUSTER_POTRI ||
                (spec->routine == MUSTER_SYEVD && !(spec->flags & MUSTER_NO_VECTORS));
  if (rc == 0 && out->rc == 0 && vectors) rc = gather_blocks(j, spec, &p, full);
  if (rc == 0 && out->rc == 0 && j->rank == 0) {
    if (X && p.b) memcpy(X, p.b, p.b_bytes);
    if (W && p.w) memcpy(W, p.w, p.w_bytes);
  }
  piece_free(&p);
  return rc;
}
