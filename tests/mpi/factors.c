/*
 * tests/mpi/factors.c - "factors": geqrf (thin and full), gesvd (values
 * only, thin vectors) and polar through the scalapack provider, every
 * dtype, a tall, a wide and a square A (m = 2n+3, n/2+1, n), through
 * muster_solve_comm (auto tile) and directly (tile 7); block layout, every
 * rank holding all m rows of its columns.  Checked on rank 0 with every
 * rank's result shared: tools/muster/check_qr.h's chk_factors (||A - QR||,
 * ||A - U S V^H||, ||A - U_p H||, orthogonality, R upper trapezoidal, S
 * descending, H Hermitian) on rank 0's copy under chk_factor_tolerance,
 * every rank's B and W the same; a rank-deficient A (column n/2 = column
 * 0) solved; NaN in A refused with MUSTER_ENONFINITE on every rank, nothing
 * written; gesvd's full vectors refused (MUSTER_EUNSUPPORTED: pXgesvd has
 * thin ones only).
 */
#include <math.h>

#include "../../tools/muster/check_qr.h"
#include "muster/layout.h"
#include "mpi/driver.h"

static const muster_dtype_t dtypes[] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};

typedef struct fcase {
  lfx_t fx;
  int64_t m;
  void *A; /* m x n, ld m */
} fcase_t;

enum spoil { CLEAN, DEFICIENT, NAN_A };

/* The forms: routine + flags. */
static const struct form {
  muster_routine_t routine;
  unsigned flags;
} forms[] = {
    {MUSTER_GEQRF, 0}, {MUSTER_GEQRF, MUSTER_FULL_MATRICES}, {MUSTER_GESVD, MUSTER_NO_VECTORS},
    {MUSTER_GESVD, 0}, {MUSTER_POLAR, 0},
};

static void setup(fcase_t *c, drv_t *d, const struct form *f, muster_dtype_t t, int64_t m, int64_t n,
                  uint64_t seed, enum spoil how) {
  memset(c, 0, sizeof *c);
  muster_outputs_t o;
  unsigned flags = f->flags;
  ASSERT_OK(muster_routine_outputs(f->routine, flags, m, n, &o));
  lfx_t *fx = &c->fx;
  c->m = m;
  *fx = (lfx_t){.routine = f->routine, .t = t, .esz = muster_dtype_size(t), .n = n,
                .nrhs = o.b_cols > 0 ? o.b_cols : 1, .R = d->size, .layout = MUSTER_LAYOUT_BLOCK, .flags = flags,
                .lda = m + (int64_t)(seed % 2), .ldb = m};
  c->A = calloc((size_t)(m * n), fx->esz);
  ASSERT(c->A);
  chk_rng_t rng;
  chk_seed(&rng, seed);
  chk_random_dense(t, m, n, &rng, c->A, m);
  for (int64_t i = 0; how == DEFICIENT && i < m; i++) chk_set(t, c->A, m, i, n / 2, chk_get(t, c->A, m, i, 0));
  if (how == NAN_A) chk_set(t, c->A, m, m - 1, n - 1, NAN);
  muster_layout_geom_t L;
  ASSERT_OK(muster_layout_geom_init(&L, n, 1, fx->R));
  for (int r = 0; r < fx->R; r++) {
    int64_t c0 = muster_layout_block_col0(&L, r), nc = muster_layout_block_ncols(&L, r);
    fx->blk[r] = calloc((size_t)(L.block_cols * fx->lda), fx->esz);
    void *b = calloc((size_t)(m * fx->nrhs), fx->esz), *w = calloc((size_t)n, sizeof(double));
    ASSERT(fx->blk[r] && b && w);
    muster_copy_cols(fx->blk[r], fx->lda, (char *)c->A + (size_t)(c0 * m) * fx->esz, m, m, nc, fx->esz);
    fx->shards[r] = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = fx->blk[r],
                                     .lda = fx->lda, .col0 = c0, .ncols = nc, .b = b, .ldb = m, .w = w};
  }
}

/* Every rank's A piece reassembled (m x n, ld m), from the shared shards. */
static void *after_a(const fcase_t *c) {
  const lfx_t *fx = &c->fx;
  void *a = malloc((size_t)(c->m * fx->n) * fx->esz);
  ASSERT(a);
  for (int r = 0; r < fx->R; r++) {
    const muster_shard_t *s = &fx->shards[r];
    muster_copy_cols((char *)a + (size_t)(s->col0 * c->m) * fx->esz, c->m, s->a, fx->lda, c->m, s->ncols,
                     fx->esz);
  }
  return a;
}

static void check(const fcase_t *c, char *why, size_t len) {
  const lfx_t *fx = &c->fx;
  int64_t k = c->m < fx->n ? c->m : fx->n;
  for (int r = 1; r < fx->R; r++) {
    if (memcmp(fx->shards[r].b, fx->shards[0].b, (size_t)(c->m * fx->nrhs) * fx->esz))
      drv_say(why, len, "B on rank %d differs from rank 0's", r);
    if (memcmp(fx->shards[r].w, fx->shards[0].w, (size_t)k * muster_dtype_real_size(fx->t)))
      drv_say(why, len, "W on rank %d differs from rank 0's", r);
  }
  void *a = after_a(c);
  double e = chk_factors(fx->t, fx->routine, fx->flags, c->m, fx->n, c->A, a, fx->shards[0].b,
                         fx->shards[0].w);
  if (!(e < chk_factor_tolerance(fx->t, c->m, fx->n)))
    drv_say(why, len, "chk_factors %.3g >= %.3g", e, chk_factor_tolerance(fx->t, c->m, fx->n));
  free(a);
}

static void one(drv_t *d, const struct form *f, muster_dtype_t t, int64_t m, int64_t n, int direct, int k,
                enum spoil how) {
  fcase_t c;
  setup(&c, d, f, t, m, n, d->seed + 7000u + (uint64_t)k * 11, how);
  d->tile = direct ? 7 : 0;
  size_t abytes = (size_t)(c.fx.shards[d->rank].ncols * c.fx.lda) * c.fx.esz;
  void *before = malloc(abytes ? abytes : 1);
  ASSERT(before);
  memcpy(before, c.fx.shards[d->rank].a, abytes);
  int rc = drv_solve(d, &c.fx);
  char why[700] = "";
  if (how == NAN_A) {
    if (rc != MUSTER_ENONFINITE || !strstr(c.fx.err, "NaN/Inf in A"))
      snprintf(why, sizeof why, "rc %d, want MUSTER_ENONFINITE: %s", rc, c.fx.err);
    else if (memcmp(before, c.fx.shards[d->rank].a, abytes))
      drv_say(why, sizeof why, "A's piece on rank %d was written", d->rank);
  } else if (rc != 0) {
    snprintf(why, sizeof why, "rc %d: %s", rc, c.fx.err);
  }
  drv_share(d, &c.fx);
  if (d->rank == 0 && !why[0] && how != NAN_A) check(&c, why, sizeof why);
  drv_case(d, !why[0], why, "%s %s%s %s m=%" PRId64 " n=%" PRId64 " tile=%s%s", direct ? "direct" : "comm",
           muster_routine_str(f->routine), f->flags & MUSTER_FULL_MATRICES ? " full"
           : f->flags & MUSTER_NO_VECTORS ? " values" : "", muster_dtype_str(t), m, n, direct ? "7" : "auto",
           how == DEFICIENT ? " rank-deficient" : how == NAN_A ? " NaN" : "");
  d->tile = 0;
  free(before);
  lfx_free(&c.fx);
  free(c.A);
}

/* gesvd's full vectors: MUSTER_EUNSUPPORTED on every rank, nothing written. */
static void full_svd_refused(drv_t *d, int k) {
  static const struct form full = {MUSTER_GESVD, MUSTER_FULL_MATRICES};
  fcase_t c;
  const int64_t m = 20, n = 29;
  memset(&c, 0, sizeof c);
  setup(&c, d, &full, MUSTER_F64, m, n, d->seed + 7000u + (uint64_t)k * 11, CLEAN);
  int rc = drv_solve(d, &c.fx);
  char why[700] = "";
  if (rc != MUSTER_EUNSUPPORTED || !strstr(c.fx.err, "thin vectors only"))
    snprintf(why, sizeof why, "rc %d, want MUSTER_EUNSUPPORTED: %s", rc, c.fx.err);
  drv_case(d, !why[0], why, "gesvd full refused");
  lfx_free(&c.fx);
  free(c.A);
}

void drv_mode_factors(drv_t *d) {
  int k = 0;
  const int64_t n = 29;
  const int64_t ms[] = {2 * n + 3, n / 2 + 1, n};
  const size_t nforms = sizeof forms / sizeof forms[0];
  for (int di = 0; di < 4; di++) {
    if (d->dtypes && !(d->dtypes & (1u << dtypes[di]))) continue;
    for (size_t f = 0; f < nforms; f++)
      for (int s = 0; s < 3; s++, k++) one(d, &forms[f], dtypes[di], ms[s], n, k % 2, k, CLEAN);
  }
  for (size_t f = 0; f < nforms; f++, k++) /* tall, then wide */
    one(d, &forms[f], dtypes[f % 4], f % 2 ? n / 2 : 2 * n, n, (int)(f % 2), k, DEFICIENT);
  one(d, &forms[0], MUSTER_F64, 40, n, 0, k++, NAN_A);
  one(d, &forms[4], MUSTER_C128, 20, n, 1, k++, NAN_A);
  full_svd_refused(d, k++);
}
