/*
 * providers/cusolverdn/model.c - the memory rule and the time model behind
 * estimate() (dnInt.h).  Pure arithmetic, no CUDA: estimate() must be cheap
 * and runs before anything is exported.
 *
 * Memory.  The target holds the gathered matrix (m*n elements, unless the
 * solve runs in place), cusolverDn's workspace, the right-hand sides or the
 * potri panel when no rank's buffer on the target can take them, the
 * eigenvalues (or potrs's log det) likewise, getrs's pivots or gels's
 * Householder scalars, and DN_FIXED_BYTES for cuSOLVER's (and gels's
 * cuBLAS handle's) own allocations.
 * The workspace is bounded, not asked for (asking needs a handle on the
 * GPU); gpu-test checks the bounds against cusolverDn's _bufferSize.
 *
 * Time.  seconds = engine + moves, where
 *   engine = T_FIX + k_r * f_t * n^2 * (n + h_r)   (+ potrs' solve, memory
 *            bound: 2 n^2 nrhs element reads at HBM speed)
 *   moves  = bytes between GPUs / NVLINK_BPS + bytes within the target /
 *            LOCAL_BPS, for the gather, the scatter of A (skipped when the
 *            caller does not want A: MUSTER_NO_FACTOR, MUSTER_NO_VECTORS,
 *            potri's solve path writes straight out) and the replication of
 *            X and W.
 * k_r n^2 (n + h_r) is flops at a rate that grows with n towards its peak
 * (rate = peak * n / (n + h_r)); k_r and h_r are fitted to raw cusolverDn
 * f64 on one H200 (design brief, 2026-11-23: potrs 0.0085 / 0.0395 /
 * 0.2665 / 2.0628 s at n = 8192 / 16384 / 32768 / 65536; potri 0.0596 /
 * 0.2639 s at 8192 / 16384; syevd 0.6162 / 3.2194 s at 8192 / 16384);
 * f_t scales by routine and dtype (dtype_factor below, measured).
 *
 * getrs and gels are NOT calibrated on a GPU yet: their engine time is
 * their flop count at potrs's fitted rate curve (flops_seconds: potrf's
 * n^3/3 flops take k n^2 (n + h), so F flops take 3 k F (n + h) / n), with
 * potrs's dtype factors, plus the memory-bound triangular solves:
 *   getrs  (2/3) n^3 (getrf) + 2 n^2 nrhs element reads at HBM speed;
 *   gels   2 m n^2 - (2/3) n^3 (geqrf) + 2 m n nrhs element reads
 *          (ormqr/unmqr, trsm).
 * Pivoting and Householder panels run below potrf's rate on a GPU, so
 * these are optimistic until tools/gpu/calibrate-dn.sh measures them.
 *
 * geqrf is NOT calibrated either: its flop count (M = max(m, n),
 * K = min(m, n); the estimate takes m = n, the query has no m),
 * 2 (2 M K^2 - (2/3) K^3) for Xgeqrf and orgqr, at potrs's rate curve.
 *
 * gesvd and polar run at a rate of their own: cusolverDn's Xgesvd
 * iterates on the bidiagonal, memory bound, far below potrf's rate.
 * Their flops (Golub and Van Loan's counts) take SVD_K F (N + SVD_H) / N
 * seconds, N = M:
 *   gesvd  14 M K^2 + 8 K^3 with vectors (thin or full alike), and
 *          4 M K^2 - (4/3) K^3 values only (the bidiagonalization: not
 *          measured, the same rate assumed);
 *   polar  gesvd's with vectors, plus the two gemm (2 m n K + 2 n^2 K)
 *          at potrs's rate.
 * SVD_K and SVD_H are fitted to the provider's f64 gesvd, thin vectors,
 * on one H200 (issue 29's benchmark, 2026-11-28, 4 x H200 with A gathered
 * onto one: 1.731 s at 4096 and 9.715 s at 8192; measured-h200.cost);
 * the same fit gives 12.5 s for 16384 x 8192 (measured 13.09 s) and
 * polar's 1.74 and 9.77 s (measured 1.725 and 9.786 s).  The dtype
 * factors are potrs's until a complex gesvd is timed.
 */
#include "dnInt.h"
#include "factplan.h"

#define T_FIX 0.002         /* s: per call (launches, syncs, small-n tail;
                               potrs f64 n = 4096 took 2.6 ms on one H200) */
#define NVLINK_BPS 370e9    /* bytes/s between two GPUs (H200, measured)    */
#define LOCAL_BPS 1.0e12    /* bytes/s of a 2-D copy within one GPU (payload;
                               H100: 4.3 GB gathered and scattered in 5 ms) */
#define HBM_BPS 3.0e12      /* bytes/s read by a memory-bound kernel        */
#define SVD_K 4.626e-13     /* s per flop at the top of Xgesvd's rate (2.16
                               TF/s; fit above)                            */
#define SVD_H 6031          /* its rate's half point in N (fit above)      */

/* k (s per n^2 (n + h)) and h per routine, f64 (fits above). */
static const struct {
  double k, h;
} fit[] = {
    [MUSTER_POTRS] = {7.08e-15, 2278},   /* potrf: n^3/3 flops at up to 47 TF/s */
    [MUSTER_POTRI] = {1.57e-14, 45526},  /* potrf + potri: n^3 at up to 64 TF/s  */
    [MUSTER_SYEVD] = {3.42e-13, 18667},  /* vectors                              */
};
#define SYEVD_VALUES_FACTOR 0.35 /* no vectors: tridiagonalization only (not
                                    measured yet: LAPACK's flop ratio)        */

/* Time relative to f64 at the same n, per routine, indexed by dtype: the
 * provider itself on one H200 (measured-h200.cost beside this file, made by
 * tools/gpu/calibrate-dn.sh on 2026-11-23), at the largest n measured for
 * that routine (potrs 32768, potri 16384, syevd 16384 real / 8192 complex);
 * syevd f32 is 0.88 at 8192 and 0.64 at 16384: 0.75 between them.  The
 * test dn_provider_model_matches_h200 holds the model to that file. */
static double dtype_factor(muster_routine_t r, muster_dtype_t t) {
  static const double f[][MUSTER_DTYPE_END] = {
      /*                  f32   f64   c64   c128 */
      [MUSTER_POTRS] = {0, 1.04, 1.00, 3.56, 4.00},
      [MUSTER_POTRI] = {0, 1.03, 1.00, 2.09, 2.17},
      [MUSTER_SYEVD] = {0, 0.75, 1.00, 1.16, 1.83},
  };
  return f[r][t];
}

/* potrf's n^3/3 flops take fit k n^2 (n + h): F flops of a factorization
 * of order n at the same rate curve. */
static double flops_seconds(double flops, double n) {
  return 3.0 * fit[MUSTER_POTRS].k * flops * (n + fit[MUSTER_POTRS].h) / n;
}

uint64_t dn_gels_ormqr_elements(int64_t m, int64_t n) {
  uint64_t rows = (uint64_t)(m > n ? m : n);
  return (2 * rows + 512) * (uint64_t)n;
}

uint64_t dn_workspace_bound(muster_routine_t routine, muster_dtype_t dtype, int64_t m, int64_t n) {
  uint64_t e = muster_dtype_bytes(dtype), nn = (uint64_t)n;
  uint64_t big = (uint64_t)(m > n ? m : n), small = (uint64_t)(m < n ? m : n);
  /* gesvd, polar: Xgesvd on the tall one of A and A^H (big x small); taken
   * as a copy of it and 512 elements a row and column, not measured yet
   * (gpu-test's factor workspace case holds it to _bufferSize) */
  if (routine == MUSTER_GESVD || routine == MUSTER_POLAR)
    return (big * small + 512 * (big + small)) * e + (32ull << 20);
  /* geqrf: Xgeqrf's and orgqr's panels, as potrf's below on the longer side */
  if (routine == MUSTER_GEQRF) return 1024 * big * e + (32ull << 20);
  /* Xsyevd asks 4 n^2 + 128 n elements, with or without vectors (its
   * _bufferSize on an H100, CUDA 13.0, every dtype, n = 4096 .. 32768):
   * with the matrix, 5 n^2 elements, so f64 n = 65536 (171 GB) fits no
   * single GPU of 2026 */
  if (routine == MUSTER_SYEVD) return 4 * nn * nn * e + 256 * nn * e + (32ull << 20);
  /* gels: the legacy ormqr asks (2 n + 272) n elements for an n x n A with
   * one right-hand side (its _bufferSize on an H200, CUDA 13.0, every
   * dtype, n = 4096 and 16384: far above Xgeqrf's panels); taken as
   * (2 max(m, n) + 512) n for a tall A, not measured */
  if (routine == MUSTER_GELS) return dn_gels_ormqr_elements(m, n) * e + (32ull << 20);
  /* potrf, getrf and the legacy potri (the solve path's panel is dn_need's
   * extra) */
  return 1024 * nn * e + (32ull << 20);
}

/* Rows of A: gels's m, else (or unknown) n. */
static int64_t rows_of(const dn_shape_t *s) { return s->m > 0 ? s->m : s->n; }

void dn_need(const dn_shape_t *s, dn_need_t *need) {
  uint64_t e = muster_dtype_bytes(s->dtype), r = muster_dtype_real_bytes(s->dtype), n = (uint64_t)s->n;
  uint64_t m = (uint64_t)rows_of(s);
  need->matrix = s->in_place ? 0 : m * n * e;
  need->workspace = dn_workspace_bound(s->routine, s->dtype, (int64_t)m, s->n);
  need->extra = 0;
  if ((muster_routine_takes(s->routine) & MUSTER_TAKES_B) && s->on_target == 0)
    need->extra = (s->routine == MUSTER_GELS ? m : n) * (uint64_t)s->nrhs * e;
  if (s->routine == MUSTER_POTRS && (s->flags & MUSTER_LOGDET) && s->on_target == 0) need->extra += r;
  if (s->routine == MUSTER_GETRS) need->extra += n * 8; /* the pivots           */
  if (s->routine == MUSTER_GELS) need->extra += n * e;  /* the Householder scalars */
  if (s->routine == MUSTER_POTRI && s->potri_path == DN_POTRI_SOLVE)
    need->extra = n * (uint64_t)(s->n < DN_PANEL ? s->n : DN_PANEL) * e;
  if (s->routine == MUSTER_SYEVD && s->on_target == 0) need->extra = n * r;
  if (muster_routine_takes(s->routine) & MUSTER_TAKES_O) { /* the factor buffer, tau or S: factors.c */
    dn_fplan_t p;
    need->extra = 0;
    if (dn_factor_plan(s->routine, s->flags, (int64_t)m, s->n, &p) == 0)
      need->extra = (uint64_t)p.fac_elems * e + (uint64_t)p.o.k * (s->routine == MUSTER_GEQRF ? e : r);
  }
  need->total = need->matrix + need->workspace + need->extra + DN_FIXED_BYTES;
}

/* Does the caller get A back (so the scatter is paid)? */
static int writes_a_back(const dn_shape_t *s) {
  return !s->in_place && muster_routine_writes_a(s->routine, s->flags, rows_of(s), s->n);
}

/* geqrf, gesvd, polar: seconds of the factor routines (the header's
 * counts and rates). */
static double factor_seconds(const dn_shape_t *s) {
  double n = (double)s->n, m = (double)rows_of(s), M = m > n ? m : n, K = m < n ? m : n;
  double f = dtype_factor(MUSTER_POTRS, s->dtype);
  if (s->routine == MUSTER_GEQRF) return f * flops_seconds(2.0 * (2.0 * M * K * K - 2.0 / 3.0 * K * K * K), M);
  double svd_flops = (s->routine == MUSTER_GESVD && (s->flags & MUSTER_NO_VECTORS))
                         ? 4.0 * M * K * K - 4.0 / 3.0 * K * K * K
                         : 14.0 * M * K * K + 8.0 * K * K * K;
  double svd = f * SVD_K * svd_flops * (M + SVD_H) / M;
  if (s->routine != MUSTER_POLAR) return svd;
  return svd + f * flops_seconds(2.0 * m * n * K + 2.0 * n * n * K, M);
}

/* Engine seconds of the routine on the target (no moves). */
static double engine_seconds(const dn_shape_t *s) {
  double n = (double)s->n, m = (double)rows_of(s), nrhs = (double)s->nrhs;
  double e = (double)muster_dtype_bytes(s->dtype);
  if (muster_routine_takes(s->routine) & MUSTER_TAKES_O) return T_FIX + factor_seconds(s);
  if (s->routine == MUSTER_GETRS)
    return T_FIX + dtype_factor(MUSTER_POTRS, s->dtype) * flops_seconds(2.0 / 3.0 * n * n * n, n) +
           2.0 * n * n * nrhs * e / HBM_BPS;
  if (s->routine == MUSTER_GELS)
    return T_FIX + dtype_factor(MUSTER_POTRS, s->dtype) * flops_seconds(2.0 * m * n * n - 2.0 / 3.0 * n * n * n, n) +
           2.0 * m * n * nrhs * e / HBM_BPS;
  double engine = T_FIX + fit[s->routine].k * dtype_factor(s->routine, s->dtype) * n * n * (n + fit[s->routine].h);
  if (s->routine == MUSTER_SYEVD && (s->flags & MUSTER_NO_VECTORS))
    engine = T_FIX + (engine - T_FIX) * SYEVD_VALUES_FACTOR;
  if (s->routine == MUSTER_POTRS) engine += 2.0 * n * n * nrhs * e / HBM_BPS;
  return engine;
}

double dn_model_seconds(const dn_shape_t *s, double *moves, uint64_t *bytes_moved) {
  double n = (double)s->n, e = (double)muster_dtype_bytes(s->dtype);
  double engine = engine_seconds(s);
  /* the matrix: a share (1 - on/R) of its bytes crosses between GPUs */
  double all = s->in_place ? 0.0 : (double)rows_of(s) * n * e, frac_off = 1.0 - (double)s->on_target / s->nranks;
  double passes = s->in_place ? 0.0 : 1.0 + writes_a_back(s);
  double off = all * frac_off * passes, local = all * (1.0 - frac_off) * passes;
  /* results every other rank receives: X (n x nrhs) or W (n reals), or
   * the factor routines' B and singular values */
  double per_rank = (muster_routine_takes(s->routine) & MUSTER_TAKES_B) ? n * (double)s->nrhs * e
                    : s->routine == MUSTER_SYEVD ? n * (double)muster_dtype_real_bytes(s->dtype) : 0.0;
  muster_outputs_t o;
  if ((muster_routine_takes(s->routine) & MUSTER_TAKES_O) &&
      muster_routine_outputs(s->routine, s->flags, rows_of(s), s->n, &o) == 0)
    per_rank = (double)o.b_elems * e + (double)o.w_count * (double)muster_dtype_real_bytes(s->dtype);
  off += per_rank * (s->nranks - s->on_target);
  *moves = off / NVLINK_BPS + local / LOCAL_BPS;
  *bytes_moved = (uint64_t)off;
  return engine + *moves;
}
