/* tests/unit/test_dn_factplan.c - the cusolverdn provider's factor buffer
 * plan (providers/cusolverdn/factplan.h, host-only C linked in by
 * tests/SConscript): for geqrf, gesvd and polar in every form on square,
 * tall and wide A, the parts lie inside the buffer without overlapping,
 * Xgesvd always sees a tall matrix (a wide A goes through A^H), and the
 * factors sit exactly where muster_routine_outputs puts them: B's parts
 * back to back from b_at at their offsets, A's factor m x n with ld m. */
#include <string.h>

#include "cusolverdn/factplan.h"
#include "muster.h"
#include "muster/layout.h"
#include "task.h"

typedef struct span {
  int64_t at, len;
  const char *what;
} span_t;

static int add(span_t *s, int n, int64_t at, int64_t rows, int64_t cols, const char *what) {
  if (at < 0) return n;
  s[n] = (span_t){at, rows * cols, what};
  return n + 1;
}

/* Parts in [0, fac_elems), pairwise disjoint. */
static int disjoint(const dn_fplan_t *p) {
  span_t s[8];
  int64_t m = p->o.m, n = p->o.n, k = p->o.k;
  int c = 0;
  c = add(s, c, p->u_at, m, p->ucols, "U");
  c = add(s, c, p->vt_at, p->vrows, n, "VH");
  c = add(s, c, p->h_at, n, n, "H");
  c = add(s, c, p->sv_at, k, n, "SVH");
  c = add(s, c, p->t_at, n, m, "T");
  c = add(s, c, p->x1_at, n, p->vrows, "U'");
  c = add(s, c, p->x2_at, p->ucols, m, "V'H");
  for (int a = 0; a < c; a++) {
    if (s[a].at < 0 || s[a].at + s[a].len > p->fac_elems) return 0;
    for (int b = a + 1; b < c; b++)
      if (s[a].at < s[b].at + s[b].len && s[b].at < s[a].at + s[a].len) return 0;
  }
  return 1;
}

/* Where the plan keeps factor `what` in fac, with its shape: -1 if it does not. */
static int64_t where(const dn_fplan_t *p, int what, int64_t *rows, int64_t *cols) {
  switch (what) {
  case MUSTER_FACTOR_U: *rows = p->o.m; *cols = p->ucols; return p->u_at;
  case MUSTER_FACTOR_VH: *rows = p->vrows; *cols = p->o.n; return p->vt_at;
  case MUSTER_FACTOR_H: *rows = p->o.n; *cols = p->o.n; return p->h_at;
  default: return -1;
  }
}

static void check(int routine, unsigned flags, int64_t m, int64_t n) {
  dn_fplan_t p;
  muster_outputs_t o;
  ASSERT_OK(dn_factor_plan(routine, flags, m, n, &p));
  ASSERT_OK(muster_routine_outputs(routine, flags, m, n, &o));
  ASSERT(!memcmp(&p.o, &o, sizeof o));
  ASSERT(disjoint(&p));
  ASSERT_EQ(p.a_ld, m);
  if (routine == MUSTER_GEQRF) { /* B's one factor from 0, A's in mat */
    ASSERT_EQ(p.b_at, 0);
    ASSERT_EQ(p.fac_elems, o.b_elems);
    ASSERT(!p.a_in_fac && !p.wide);
    return;
  }
  /* Xgesvd factors a tall matrix: A, or A^H when A is wide */
  ASSERT_EQ(p.wide, m < n);
  ASSERT(p.sm >= p.sn);
  ASSERT_EQ(p.sm, m > n ? m : n);
  ASSERT_EQ(p.jobu, p.jobvt);
  int vectors = routine == MUSTER_POLAR || !(flags & MUSTER_NO_VECTORS);
  int full = (flags & MUSTER_FULL_MATRICES) && vectors;
  ASSERT_EQ(p.jobu, !vectors ? 'N' : full ? 'A' : 'S');
  ASSERT_EQ(p.ucols, !vectors ? 0 : full ? m : o.k);
  ASSERT_EQ(p.vrows, !vectors ? 0 : full ? n : o.k);
  ASSERT_EQ(p.t_at >= 0, p.wide);
  ASSERT_EQ(p.x1_at >= 0, p.wide && vectors);
  if (p.wide && vectors) ASSERT_EQ(p.ucols, m); /* V'^H is m x m either way */
  /* B: each part at b_at + its offset, with its shape */
  for (int i = 0; i < o.nparts; i++) {
    int64_t rows = 0, cols = 0, at = where(&p, o.part[i].what, &rows, &cols);
    ASSERT_EQ(at, p.b_at + o.part[i].offset);
    ASSERT_EQ(rows, o.part[i].rows);
    ASSERT_EQ(cols, o.part[i].cols);
  }
  /* A's factor: in fac for gesvd's thin forms (m x n, ld m), in mat for polar */
  if (o.a_holds == MUSTER_FACTOR_UP) ASSERT(!p.a_in_fac);
  if (o.a_holds == MUSTER_FACTOR_U || o.a_holds == MUSTER_FACTOR_VH) {
    int64_t rows = 0, cols = 0;
    ASSERT(p.a_in_fac);
    ASSERT_EQ(p.a_at, where(&p, o.a_holds, &rows, &cols));
    ASSERT_EQ(rows, m);
    ASSERT_EQ(cols, n);
  }
  if (routine == MUSTER_POLAR) { /* the thin SVD, H and S V^H */
    ASSERT(p.h_at >= 0 && p.sv_at >= 0);
    ASSERT_EQ(p.b_at, p.h_at);
  }
}

TEST_IMPL(dn_factplan_places_every_form) {
  static const int64_t shapes[][2] = {{1, 1}, {7, 7}, {30, 12}, {12, 30}, {1, 9}, {9, 1}, {1000, 999}, {999, 1000}};
  static const struct {
    int routine;
    unsigned flags;
  } forms[] = {{MUSTER_GEQRF, 0},
               {MUSTER_GEQRF, MUSTER_FULL_MATRICES},
               {MUSTER_GESVD, 0},
               {MUSTER_GESVD, MUSTER_FULL_MATRICES},
               {MUSTER_GESVD, MUSTER_NO_VECTORS},
               {MUSTER_GESVD, MUSTER_NO_VECTORS | MUSTER_FULL_MATRICES},
               {MUSTER_POLAR, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++)
      check(forms[f].routine, forms[f].flags, shapes[s][0], shapes[s][1]);
  /* what the rule refuses, the plan refuses */
  dn_fplan_t p;
  ASSERT_EQ(dn_factor_plan(MUSTER_POLAR, MUSTER_FULL_MATRICES, 5, 4, &p), MUSTER_EINVAL);
  ASSERT_EQ(dn_factor_plan(MUSTER_GEQRF, MUSTER_NO_VECTORS, 5, 4, &p), MUSTER_EINVAL);
  ASSERT_EQ(dn_factor_plan(MUSTER_POTRS, 0, 5, 5, &p), MUSTER_EINVAL);
  ASSERT_EQ(dn_factor_plan(MUSTER_GESVD, 0, 0, 5, &p), MUSTER_EINVAL);
  return 0;
}

/* The sizes, spelled out for one tall and one wide A: what the memory
 * rule (model.c's dn_need) counts beside the gathered matrix. */
TEST_IMPL(dn_factplan_sizes) {
  dn_fplan_t p;
  const int64_t m = 30, n = 12;
  ASSERT_OK(dn_factor_plan(MUSTER_GEQRF, 0, m, n, &p)); /* R */
  ASSERT_EQ(p.fac_elems, n * n);
  ASSERT_OK(dn_factor_plan(MUSTER_GEQRF, MUSTER_FULL_MATRICES, m, n, &p)); /* Q */
  ASSERT_EQ(p.fac_elems, m * m);
  ASSERT_OK(dn_factor_plan(MUSTER_GESVD, MUSTER_NO_VECTORS, m, n, &p));
  ASSERT_EQ(p.fac_elems, 0);
  ASSERT_OK(dn_factor_plan(MUSTER_GESVD, MUSTER_NO_VECTORS, n, m, &p)); /* wide: T only */
  ASSERT_EQ(p.fac_elems, m * n);
  ASSERT_OK(dn_factor_plan(MUSTER_GESVD, 0, m, n, &p)); /* U m x n, V^H n x n */
  ASSERT_EQ(p.fac_elems, m * n + n * n);
  ASSERT_OK(dn_factor_plan(MUSTER_GESVD, 0, n, m, &p)); /* wide 12 x 30: U 12x12, V^H 12x30, T, U' 30x12, V'^H 12x12 */
  ASSERT_EQ(p.fac_elems, n * n + n * m + m * n + m * n + n * n);
  ASSERT_OK(dn_factor_plan(MUSTER_GESVD, MUSTER_FULL_MATRICES, n, m, &p)); /* + U' 30x30 */
  ASSERT_EQ(p.fac_elems, n * n + m * m + m * n + m * m + n * n);
  ASSERT_OK(dn_factor_plan(MUSTER_POLAR, 0, m, n, &p)); /* U, V^H, H, S V^H */
  ASSERT_EQ(p.fac_elems, m * n + n * n + n * n + n * n);
  return 0;
}
