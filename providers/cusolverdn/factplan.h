/*
 * providers/cusolverdn/factplan.h - where geqrf, gesvd and polar keep
 * their factors on the target (factplan.c): pure host arithmetic, no CUDA,
 * so the C tests check it on a machine without a GPU (test_dn_factplan.c)
 * and the memory rule (model.c) counts exactly what solve() allocates.
 *
 * Besides the gathered A (m x n, ld m: "mat"), a factor routine uses one
 * more device buffer, the factor buffer "fac", cut into parts at element
 * offsets (each part packed, column-major, ld = its row count):
 *   geqrf   fac = B's factor (R, n x n; or Q, m x m); A's factor (Q thin,
 *           or R) is made in mat.
 *   gesvd   fac = U (m x ucols) | V^H (vrows x n), the SVD in its standard
 *           form whatever A's shape (thin: ucols = vrows = k; full: m and
 *           n).  Placed so that muster_routine_outputs' rule needs no
 *           copy: full vectors are B's two parts back to back (U at 0, V^H
 *           at m*m); thin and tall, U is A's factor and V^H B's; thin and
 *           wide, V^H (k = m rows) is A's factor and U B's.
 *   polar   fac = U (m x k) | V^H (k x n) | H (n x n) | S V^H (k x n);
 *           U_p = U V^H is made in mat (A's factor), H is B's.
 * cusolverDn's gesvd takes m >= n only, so a wide A (m < n) goes through
 * its conjugate transpose: T = A^H (n x m, tall) is factored instead,
 * T = U' S V'^H, and A = V' S U'^H, so A's U = (V'^H)^H and A's V^H =
 * U'^H, each one cuBLAS geam (conjugate transpose) into the parts above.
 * T, U' (n x vrows) and V'^H (ucols x m) then follow in fac (wide_*).
 * Values only need just T (wide) or nothing.
 */
#ifndef MUSTER_DN_FACTPLAN_H
#define MUSTER_DN_FACTPLAN_H

#include <stdint.h>

#include "muster/layout.h"

typedef struct dn_fplan {
  muster_outputs_t o;        /* muster_routine_outputs: what goes where    */
  int wide;                  /* gesvd, polar with m < n: through A^H       */
  char jobu, jobvt;          /* Xgesvd's jobs on A (or A^H): 'N', 'S', 'A' */
  int64_t sm, sn;            /* the shape Xgesvd factors: m x n, or n x m  */
  int64_t ucols, vrows;      /* U m x ucols, V^H vrows x n (standard form) */
  int64_t u_at, vt_at;       /* their offsets in fac, -1 when not made     */
  int64_t h_at, sv_at;       /* polar: H, S V^H                            */
  int64_t t_at, x1_at, x2_at;/* wide: T = A^H, U' (n x vrows), V'^H
                                (ucols x m)                                */
  int a_in_fac;              /* A's factor: 0 in mat (ld m), 1 in fac      */
  int64_t a_at, a_ld;        /* its offset in fac and leading dimension    */
  int64_t b_at;              /* B's factors: b_elems elements from here    */
  int64_t fac_elems;         /* the factor buffer's size, in elements      */
} dn_fplan_t;

/* The plan of routine (geqrf, gesvd, polar) with flags on an m x n A.
 * 0, or MUSTER_EINVAL when muster_routine_outputs refuses the call. */
__attribute__((visibility("hidden"))) int dn_factor_plan(int routine, unsigned flags, int64_t m, int64_t n,
                                                         dn_fplan_t *p);

#endif
