// tests/gpu/gpu_util.cu - test matrices generated on the GPU and the checks
// that regenerate them on the fly (see gpu_util.h).
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

namespace {

struct Cx {
  double re, im;
};

__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ double u11(uint64_t h) { return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

__device__ __forceinline__ bool is_cplx(int dt) { return dt == 3 || dt == 4; }

__device__ __forceinline__ Cx entry(int64_t i, int64_t j, uint64_t seed, double shift, int dt) {
  if (seed & GU_GENERAL) {  // gpu_util.h: every entry its own hash
    uint64_t h = mix(seed ^ mix((uint64_t)i * 0x100000001B3ull + (uint64_t)j));
    return Cx{u11(h) + (i == j ? shift : 0.0), is_cplx(dt) ? u11(mix(h)) : 0.0};
  }
  if (i == j) return Cx{0.5 * u11(mix(seed ^ mix((uint64_t)i))) + shift, 0.0};
  int64_t lo = i < j ? i : j, hi = i < j ? j : i;
  uint64_t h = mix(seed ^ mix((uint64_t)hi * 0x100000001B3ull + (uint64_t)lo));
  if (!is_cplx(dt)) return Cx{u11(h), 0.0};
  double re = 0.5 * u11(h), im = 0.5 * u11(mix(h));
  return i > j ? Cx{re, im} : Cx{re, -im};  // stored lower: a(hi, lo) = re + i im
}

__device__ __forceinline__ Cx ld(const void *p, int dt, int64_t k) {
  switch (dt) {
  case 1: return Cx{(double)((const float *)p)[k], 0.0};
  case 2: return Cx{((const double *)p)[k], 0.0};
  case 3: {
    float2 v = ((const float2 *)p)[k];
    return Cx{(double)v.x, (double)v.y};
  }
  default: {
    double2 v = ((const double2 *)p)[k];
    return Cx{v.x, v.y};
  }
  }
}

__device__ __forceinline__ void st(void *p, int dt, int64_t k, Cx v) {
  switch (dt) {
  case 1: ((float *)p)[k] = (float)v.re; break;
  case 2: ((double *)p)[k] = v.re; break;
  case 3: ((float2 *)p)[k] = make_float2((float)v.re, (float)v.im); break;
  default: ((double2 *)p)[k] = make_double2(v.re, v.im); break;
  }
}

__device__ __forceinline__ int64_t global_col(const gu_cols_t &c, int64_t lc, int64_t n) {
  int64_t g;
  if (!c.cyclic) {
    g = c.col0 + lc;
  } else {
    int64_t t = lc / c.width;
    g = (t * c.nranks + c.rank) * c.width + lc % c.width;
  }
  return g < n ? g : -1;
}

__device__ __forceinline__ double absc(Cx v) { return sqrt(v.re * v.re + v.im * v.im); }

__global__ void k_fill(int dt, void *a, int64_t lda, int64_t n, int64_t ncols, gu_cols_t cols, uint64_t seed,
                       double shift) {
  int64_t total = n * ncols;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = idx % n, lc = idx / n, g = global_col(cols, lc, n);
    st(a, dt, lc * lda + i, g < 0 ? Cx{0.0, 0.0} : entry(i, g, seed, shift, dt));
  }
}

__global__ void k_fill_vec(int dt, void *b, int64_t ldb, int64_t n, int64_t nrhs, uint64_t seed) {
  int64_t total = n * nrhs;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = idx % n, k = idx / n;
    uint64_t h = mix(seed ^ mix(0xB0B0ull + (uint64_t)idx));
    st(b, dt, k * ldb + i, Cx{u11(h), is_cplx(dt) ? u11(mix(h)) : 0.0});
  }
}

#define CH 2048  // columns of A one thread sums over

// r(i, k) += sum_{j in chunk} a(i, j) x(j, k), k < nk (<= 8); rowabs(i) += |a(i, j)| when k0 == 0
__global__ void k_matvec(int dt, int64_t n, int nk, const void *x, int64_t ldx, int64_t k0, uint64_t seed,
                         double shift, double *r, double *rowabs) {
  int64_t chunks = (n + CH - 1) / CH, total = n * chunks;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = idx % n, c = idx / n, j0 = c * CH, j1 = j0 + CH < n ? j0 + CH : n;
    Cx acc[8];
    for (int k = 0; k < 8; k++) acc[k] = Cx{0.0, 0.0};
    double ab = 0.0;
    for (int64_t j = j0; j < j1; j++) {
      Cx a = entry(i, j, seed, shift, dt);
      ab += absc(a);
      for (int k = 0; k < nk; k++) {
        Cx v = ld(x, dt, (k0 + k) * ldx + j);
        acc[k].re += a.re * v.re - a.im * v.im;
        acc[k].im += a.re * v.im + a.im * v.re;
      }
    }
    for (int k = 0; k < nk; k++) {
      atomicAdd(&r[2 * ((k0 + k) * n + i)], acc[k].re);
      atomicAdd(&r[2 * ((k0 + k) * n + i) + 1], acc[k].im);
    }
    if (k0 == 0) atomicAdd(&rowabs[i], ab);
  }
}

// e(i, q) for checked local column lc = q * every: |(A m(:, lc))_i - target(i)|, target = e_g or w_g m(i, lc)
__global__ void k_colcheck(int dt, int64_t n, const void *m, int64_t lda, int64_t nq, int64_t every,
                           gu_cols_t cols, const double *w, uint64_t seed, double shift, double *e) {
  int64_t total = n * nq;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = idx % n, q = idx / n, lc = q * every, g = global_col(cols, lc, n);
    if (g < 0) {
      e[idx] = 0.0;
      continue;
    }
    Cx acc{0.0, 0.0};
    for (int64_t j = 0; j < n; j++) {
      Cx a = entry(i, j, seed, shift, dt), v = ld(m, dt, lc * lda + j);
      acc.re += a.re * v.re - a.im * v.im;
      acc.im += a.re * v.im + a.im * v.re;
    }
    if (w) {
      Cx v = ld(m, dt, lc * lda + i);
      acc.re -= w[g] * v.re;
      acc.im -= w[g] * v.im;
    } else if (i == g) {
      acc.re -= 1.0;
    }
    e[idx] = absc(acc);
  }
}

// per checked column: | ||v|| - 1 | and |v_lc^H v_lc+every| (neighbour in the same buffer)
__global__ void k_orth(int dt, int64_t n, const void *m, int64_t lda, int64_t nq, int64_t every, int64_t ncols,
                       double *o) {
  int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (q >= nq) return;
  int64_t lc = q * every, lc2 = lc + 1;
  double nrm = 0.0;
  Cx dot{0.0, 0.0};
  for (int64_t i = 0; i < n; i++) {
    Cx v = ld(m, dt, lc * lda + i);
    nrm += v.re * v.re + v.im * v.im;
    if (lc2 < ncols) {
      Cx u = ld(m, dt, lc2 * lda + i);
      dot.re += v.re * u.re + v.im * u.im;  // conj(v) u
      dot.im += v.re * u.im - v.im * u.re;
    }
  }
  o[2 * q] = fabs(sqrt(nrm) - 1.0);
  o[2 * q + 1] = absc(dot);
}

__global__ void k_trace_frob(int dt, int64_t n, uint64_t seed, double shift, double *acc) {
  double tr = 0.0, fr = 0.0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    tr += entry(i, i, seed, shift, dt).re;
    for (int64_t j = 0; j < n; j++) {
      Cx a = entry(i, j, seed, shift, dt);
      fr += a.re * a.re + a.im * a.im;
    }
  }
  atomicAdd(&acc[0], tr);
  atomicAdd(&acc[1], fr);
}

unsigned blocks_for(int64_t total) {
  int64_t b = (total + 255) / 256;
  return (unsigned)(b > 65536 ? 65536 : (b < 1 ? 1 : b));
}

double host_max(const double *d, int64_t count) {
  double m = 0.0;
  for (int64_t k = 0; k < count; k++)
    if (!(d[k] <= m)) m = d[k];  // NaN wins
  return m;
}

cudaError_t fetch(double *host, const double *dev, int64_t count) {
  return cudaMemcpy(host, dev, (size_t)count * sizeof(double), cudaMemcpyDeviceToHost);
}

}  // namespace

extern "C" {

size_t gu_esz(int dt) { return dt == 1 ? 4 : dt == 4 ? 16 : 8; }
size_t gu_rsz(int dt) { return (dt == 1 || dt == 3) ? 4 : 8; }
double gu_eps(int dt) { return (dt == 1 || dt == 3) ? 1.1920929e-07 : 2.220446049250313e-16; }

void gu_resid_ratios(int routine, int dt, int64_t n, const double out[4], double ratio[2]) {
  double ne = (double)n * gu_eps(dt);
  if (routine == 3) {
    ratio[0] = out[0] / (out[3] * ne);
    ratio[1] = (out[1] > out[2] ? out[1] : out[2]) / ne;
  } else {
    ratio[0] = out[0] / (out[2] * out[1] * ne);
    ratio[1] = 0.0;
  }
}

cudaError_t gu_fill_matrix(int dt, void *a, int64_t lda, int64_t n, int64_t ncols, gu_cols_t cols, uint64_t seed,
                           double shift, cudaStream_t s) {
  if (ncols <= 0) return cudaSuccess;
  k_fill<<<blocks_for(n * ncols), 256, 0, s>>>(dt, a, lda, n, ncols, cols, seed, shift);
  return cudaGetLastError();
}

cudaError_t gu_fill_vectors(int dt, void *b, int64_t ldb, int64_t n, int64_t nrhs, uint64_t seed, cudaStream_t s) {
  k_fill_vec<<<blocks_for(n * nrhs), 256, 0, s>>>(dt, b, ldb, n, nrhs, seed);
  return cudaGetLastError();
}

cudaError_t gu_check_potrs(int dt, int64_t n, int64_t nrhs, const void *x, int64_t ldx, const void *b, int64_t ldb,
                           uint64_t seed, double shift, double out[3]) {
  double *r = NULL, *rowabs = NULL, *hr = NULL, *hrow = NULL;
  char *hx = NULL, *hb = NULL;
  size_t esz = gu_esz(dt);
  cudaError_t st = cudaMalloc(&r, (size_t)(2 * n * nrhs) * sizeof(double));
  if (st == cudaSuccess) st = cudaMalloc(&rowabs, (size_t)n * sizeof(double));
  if (st == cudaSuccess) st = cudaMemset(r, 0, (size_t)(2 * n * nrhs) * sizeof(double));
  if (st == cudaSuccess) st = cudaMemset(rowabs, 0, (size_t)n * sizeof(double));
  for (int64_t k0 = 0; st == cudaSuccess && k0 < nrhs; k0 += 8) {
    int nk = (int)(nrhs - k0 < 8 ? nrhs - k0 : 8);
    k_matvec<<<blocks_for(n * ((n + CH - 1) / CH)), 256>>>(dt, n, nk, x, ldx, k0, seed, shift, r, rowabs);
    st = cudaGetLastError();
  }
  if (st == cudaSuccess) st = cudaDeviceSynchronize();
  hr = (double *)malloc((size_t)(2 * n * nrhs) * sizeof(double));
  hrow = (double *)malloc((size_t)n * sizeof(double));
  hx = (char *)malloc((size_t)(n * nrhs) * esz);
  hb = (char *)malloc((size_t)(n * nrhs) * esz);
  if (st == cudaSuccess && (!hr || !hrow || !hx || !hb)) st = cudaErrorMemoryAllocation;
  if (st == cudaSuccess) st = fetch(hr, r, 2 * n * nrhs);
  if (st == cudaSuccess) st = fetch(hrow, rowabs, n);
  if (st == cudaSuccess)
    st = cudaMemcpy2D(hx, (size_t)n * esz, x, (size_t)ldx * esz, (size_t)n * esz, (size_t)nrhs, cudaMemcpyDefault);
  if (st == cudaSuccess)
    st = cudaMemcpy2D(hb, (size_t)n * esz, b, (size_t)ldb * esz, (size_t)n * esz, (size_t)nrhs, cudaMemcpyDefault);
  if (st == cudaSuccess) {
    double rmax = 0.0, xmax = 0.0;
    for (int64_t k = 0; k < n * nrhs; k++) {
      double bre, bim = 0.0, xre, xim = 0.0;
      if (dt == 1) { bre = ((float *)hb)[k]; xre = ((float *)hx)[k]; }
      else if (dt == 2) { bre = ((double *)hb)[k]; xre = ((double *)hx)[k]; }
      else if (dt == 3) { bre = ((float *)hb)[2 * k]; bim = ((float *)hb)[2 * k + 1]; xre = ((float *)hx)[2 * k]; xim = ((float *)hx)[2 * k + 1]; }
      else { bre = ((double *)hb)[2 * k]; bim = ((double *)hb)[2 * k + 1]; xre = ((double *)hx)[2 * k]; xim = ((double *)hx)[2 * k + 1]; }
      double dr = hr[2 * k] - bre, di = hr[2 * k + 1] - bim;
      double e = sqrt(dr * dr + di * di), xa = sqrt(xre * xre + xim * xim);
      if (!(e <= rmax)) rmax = e;
      if (!(xa <= xmax)) xmax = xa;
    }
    out[0] = rmax;
    out[1] = xmax;
    out[2] = host_max(hrow, n);
  }
  cudaFree(r);
  cudaFree(rowabs);
  free(hr);
  free(hrow);
  free(hx);
  free(hb);
  return st;
}

static cudaError_t colcheck(int dt, int64_t n, const void *m, int64_t lda, int64_t ncols, gu_cols_t cols,
                            const void *w, uint64_t seed, double shift, int64_t every, double *emax, double *orth,
                            double *mmax) {
  int64_t nq = (ncols + every - 1) / every;
  double *e = NULL, *dw = NULL, *o = NULL, *he = NULL, *ho = NULL;
  cudaError_t st = cudaSuccess;
  if (nq <= 0) {
    *emax = 0.0;
    return cudaSuccess;
  }
  st = cudaMalloc(&e, (size_t)(n * nq) * sizeof(double));
  if (st == cudaSuccess && w) {
    st = cudaMalloc(&dw, (size_t)n * sizeof(double));
    if (st == cudaSuccess) {
      double *hw = (double *)malloc((size_t)n * sizeof(double));
      char *raw = (char *)malloc((size_t)n * gu_rsz(dt));
      if (!hw || !raw) st = cudaErrorMemoryAllocation;
      if (st == cudaSuccess) st = cudaMemcpy(raw, w, (size_t)n * gu_rsz(dt), cudaMemcpyDefault);
      if (st == cudaSuccess) {
        for (int64_t k = 0; k < n; k++) hw[k] = gu_rsz(dt) == 4 ? ((float *)raw)[k] : ((double *)raw)[k];
        st = cudaMemcpy(dw, hw, (size_t)n * sizeof(double), cudaMemcpyHostToDevice);
      }
      free(hw);
      free(raw);
    }
  }
  if (st == cudaSuccess) {
    k_colcheck<<<blocks_for(n * nq), 256>>>(dt, n, m, lda, nq, every, cols, dw, seed, shift, e);
    st = cudaGetLastError();
  }
  if (st == cudaSuccess && orth) {
    st = cudaMalloc(&o, (size_t)(2 * nq) * sizeof(double));
    if (st == cudaSuccess) {
      k_orth<<<(unsigned)((nq + 127) / 128), 128>>>(dt, n, m, lda, nq, every, ncols, o);
      st = cudaGetLastError();
    }
  }
  if (st == cudaSuccess) st = cudaDeviceSynchronize();
  he = (double *)malloc((size_t)(n * nq) * sizeof(double));
  if (st == cudaSuccess && !he) st = cudaErrorMemoryAllocation;
  if (st == cudaSuccess) st = fetch(he, e, n * nq);
  if (st == cudaSuccess) *emax = host_max(he, n * nq);
  if (st == cudaSuccess && orth) {
    ho = (double *)malloc((size_t)(2 * nq) * sizeof(double));
    if (!ho) st = cudaErrorMemoryAllocation;
    if (st == cudaSuccess) st = fetch(ho, o, 2 * nq);
    if (st == cudaSuccess) {
      orth[0] = orth[1] = 0.0;
      for (int64_t q = 0; q < nq; q++) {
        if (!(ho[2 * q] <= orth[0])) orth[0] = ho[2 * q];
        if (!(ho[2 * q + 1] <= orth[1])) orth[1] = ho[2 * q + 1];
      }
    }
  }
  if (st == cudaSuccess && mmax) { /* max |m| over the local columns (host copy) */
    size_t esz = gu_esz(dt);
    char *hm = (char *)malloc((size_t)(n * ncols) * esz);
    if (!hm) st = cudaErrorMemoryAllocation;
    if (st == cudaSuccess)
      st = cudaMemcpy2D(hm, (size_t)n * esz, m, (size_t)lda * esz, (size_t)n * esz, (size_t)ncols, cudaMemcpyDefault);
    if (st == cudaSuccess) {
      double mx = 0.0;
      for (int64_t k = 0; k < n * ncols; k++) {
        double v;
        if (dt == 1) v = fabs(((float *)hm)[k]);
        else if (dt == 2) v = fabs(((double *)hm)[k]);
        else if (dt == 3) v = hypot(((float *)hm)[2 * k], ((float *)hm)[2 * k + 1]);
        else v = hypot(((double *)hm)[2 * k], ((double *)hm)[2 * k + 1]);
        if (!(v <= mx)) mx = v;
      }
      *mmax = mx;
    }
    free(hm);
  }
  cudaFree(e);
  cudaFree(dw);
  cudaFree(o);
  free(he);
  free(ho);
  return st;
}

static cudaError_t row_norm(int dt, int64_t n, uint64_t seed, double shift, double *anorm) {
  /* ||A||_inf through the potrs check with x = 0 columns: reuse k_matvec */
  double *r = NULL, *rowabs = NULL, *h = NULL;
  void *x = NULL;
  cudaError_t st = cudaMalloc(&r, (size_t)(2 * n) * sizeof(double));
  if (st == cudaSuccess) st = cudaMalloc(&rowabs, (size_t)n * sizeof(double));
  if (st == cudaSuccess) st = cudaMalloc(&x, (size_t)n * gu_esz(dt));
  if (st == cudaSuccess) st = cudaMemset(rowabs, 0, (size_t)n * sizeof(double));
  if (st == cudaSuccess) st = cudaMemset(r, 0, (size_t)(2 * n) * sizeof(double));
  if (st == cudaSuccess) st = cudaMemset(x, 0, (size_t)n * gu_esz(dt));
  if (st == cudaSuccess) {
    k_matvec<<<blocks_for(n * ((n + CH - 1) / CH)), 256>>>(dt, n, 1, x, n, 0, seed, shift, r, rowabs);
    st = cudaGetLastError();
  }
  if (st == cudaSuccess) st = cudaDeviceSynchronize();
  h = (double *)malloc((size_t)n * sizeof(double));
  if (st == cudaSuccess && !h) st = cudaErrorMemoryAllocation;
  if (st == cudaSuccess) st = fetch(h, rowabs, n);
  if (st == cudaSuccess) *anorm = host_max(h, n);
  cudaFree(r);
  cudaFree(rowabs);
  cudaFree(x);
  free(h);
  return st;
}

cudaError_t gu_check_potri(int dt, int64_t n, const void *inv, int64_t lda, int64_t ncols, gu_cols_t cols,
                           uint64_t seed, double shift, double out[3]) {
  int64_t every = ncols > 64 && n > 4096 ? ncols / 64 : 1;
  cudaError_t st = colcheck(dt, n, inv, lda, ncols, cols, NULL, seed, shift, every, &out[0], NULL, &out[1]);
  if (st == cudaSuccess) st = row_norm(dt, n, seed, shift, &out[2]);
  return st;
}

cudaError_t gu_check_syevd(int dt, int64_t n, const void *v, int64_t lda, int64_t ncols, gu_cols_t cols,
                           const void *w, uint64_t seed, double shift, double out[4]) {
  int64_t every = ncols > 64 && n > 4096 ? ncols / 64 : 1;
  cudaError_t st = colcheck(dt, n, v, lda, ncols, cols, w, seed, shift, every, &out[0], &out[1], NULL);
  if (st == cudaSuccess) st = row_norm(dt, n, seed, shift, &out[3]);
  return st;
}

cudaError_t gu_trace_frob(int dt, int64_t n, uint64_t seed, double shift, double out[2]) {
  double *acc = NULL;
  cudaError_t st = cudaMalloc(&acc, 2 * sizeof(double));
  if (st == cudaSuccess) st = cudaMemset(acc, 0, 2 * sizeof(double));
  if (st == cudaSuccess) {
    k_trace_frob<<<blocks_for(n), 256>>>(dt, n, seed, shift, acc);
    st = cudaGetLastError();
  }
  if (st == cudaSuccess) st = cudaDeviceSynchronize();
  if (st == cudaSuccess) st = fetch(out, acc, 2);
  cudaFree(acc);
  return st;
}

}  // extern "C"
