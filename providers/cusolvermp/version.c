/* providers/cusolvermp/version.c - releases, requirements and version
 * arithmetic (version.h).  Pure: unit-tested by including this file. */
#include <stdio.h>
#include <string.h>

#include "version.h"

static const mp_release_t mp_releases[] = {
    /* first, last, NCCL, cuBLASMp min, max, potrs nrhs, jobz N, QR on grids, LU on P x 1, geqrf on grids,
     * non-blocking NCCL fails, Gesvd + Polar,
     * label.
     * QR on grids: 0.8.0.3126 (NCCL 2.28.9, 2 x H200, 2026-11-26) solved
     * gels on two processes with X wrong past its first tile of rows (a 1x2
     * grid: cusolverMpGels, and Geqrf + Ormqr + an unpivoted Getrs, gave
     * the same wrong X; one process and tile >= n were right) and failed
     * in Ormqr on a 2x1 grid; 0.9.1 has not run on two GPUs here (its NCCL
     * wheel, 305 MB, is more than travels to the GPU machines).
     * LU on P x 1: 0.8.0.3126's cusolverMpGetrf failed with
     * CUSOLVER_STATUS_INTERNAL_ERROR on 2x1 and 4x1 grids, every time (4 x
     * H200, 2026-11-26; 1x2, 2x2 and 1x4 were right, and so were potrs and
     * syevd on 2x1).
     * geqrf on grids: 0.8.0.3126's Geqrf + Orgqr were right on 1x2 and
     * 1x4 grids, every dtype, tall, wide, full Q, cyclic (run-mp-qr.sh,
     * 18/18, 4 x H200, 2026-11-27); P x Q with P > 1 stays refused
     * (mp_refused: its Ormqr failed on 2x1 above).
     * jobz N: 0.8.0.3126's cusolverMpSyevd with jobz "N" failed with
     * CUSOLVER_STATUS_INTERNAL_ERROR on a 1x2 grid (f64, n = 1001, 4 x
     * H200, 2026-11-27; one process was right): vectors are computed and
     * dropped.
     * non-blocking NCCL: 0.8.0.3126's Potrf, Syevd and Getrf failed with
     * CUSOLVER_STATUS_INTERNAL_ERROR on a non-blocking communicator on 2
     * and 4 processes (f64, c64, c128, n = 1501, 4 x H200, 2026-11-27; the
     * relayout's own NCCL calls were right there, and one process was
     * right); 0.9 has not been tried. */
    {MP_VER(0, 8, 0), MP_VER(0, 8, 99), MP_VER(2, 27, 0), 0, 0, 1, 0, 0, 0, 1, 1, 0, "0.8"},
    {MP_VER(0, 9, 0), MP_VER(0, 9, 99), MP_VER(2, 29, 0), MP_VER(0, 10, 0), MP_VER(0, 10, 99), 1, 1, 0, 0, 0, 0, 1, "0.9"},
};

/* One decimal field at *s (advanced past it): 0..99999, else -1. */
static int field(const char **s) {
  const char *p = *s;
  long v = 0;
  if (*p < '0' || *p > '9') return -1;
  while (*p >= '0' && *p <= '9') {
    v = v * 10 + (*p - '0');
    if (v > 99999) return -1;
    p++;
  }
  *s = p;
  return (int)v;
}

int mp_ver_parse(const char *s, int *ver) {
  if (!s || !ver) return -1;
  int major = field(&s);
  if (major < 0 || *s++ != '.') return -1;
  int minor = field(&s);
  if (minor < 0 || minor > 99) return -1;
  int patch = 0;
  if (*s == '.') {
    s++;
    patch = field(&s);
    if (patch < 0 || patch > 99) return -1;
  }
  if (major > 9999) return -1;
  *ver = MP_VER(major, minor, patch);
  return 0;
}

const char *mp_ver_str(int ver, char *buf, size_t len) {
  if (ver <= 0)
    snprintf(buf, len, "unknown");
  else
    snprintf(buf, len, "%d.%d.%d", ver / 10000, ver / 100 % 100, ver % 100);
  return buf;
}

int mp_ver_from_solver_code(int code) {
  /* major 0 (every release so far): both encodings agree; a later major
   * would come in the 0.9 encoding, which is ours */
  return code > 0 ? code : 0;
}

const mp_release_t *mp_release_of(int ver) {
  for (size_t i = 0; i < sizeof mp_releases / sizeof mp_releases[0]; i++)
    if (ver >= mp_releases[i].first && ver <= mp_releases[i].last) return &mp_releases[i];
  return NULL;
}

int mp_compat(int solver, int nccl, int cublasmp, int *provisional, char *why, size_t len) {
  char a[24], b[24], c[24];
  if (provisional) *provisional = 0;
  if (!solver) {
    if (provisional) *provisional = 1;
    return 0;
  }
  const mp_release_t *r = mp_release_of(solver);
  if (!r) {
    snprintf(why, len, "cuSOLVERMp %s is not a release this provider runs (0.8 or 0.9)",
             mp_ver_str(solver, a, sizeof a));
    return -1;
  }
  if (nccl < r->nccl_min) {
    snprintf(why, len, "cuSOLVERMp %s needs NCCL >= %s, this process has %s", mp_ver_str(solver, a, sizeof a),
             mp_ver_str(r->nccl_min, b, sizeof b), nccl ? mp_ver_str(nccl, c, sizeof c) : "none");
    return -1;
  }
  if (r->cublasmp_min && cublasmp && (cublasmp < r->cublasmp_min || cublasmp > r->cublasmp_last)) {
    snprintf(why, len, "cuSOLVERMp %s needs cuBLASMp %d.%d.x, found %s", mp_ver_str(solver, a, sizeof a),
             r->cublasmp_min / 10000, r->cublasmp_min / 100 % 100, mp_ver_str(cublasmp, c, sizeof c));
    return -1;
  }
  if (r->cublasmp_min && !cublasmp && provisional) *provisional = 1;
  return 0;
}

int mp_ver_from_distinfo(const char *dirname, const char *dist) {
  size_t n = strlen(dist);
  if (strncmp(dirname, dist, n) != 0 || dirname[n] != '-') return 0;
  const char *tail = strstr(dirname + n + 1, ".dist-info");
  if (!tail || tail[strlen(".dist-info")] != '\0') return 0;
  int ver = 0;
  return mp_ver_parse(dirname + n + 1, &ver) == 0 ? ver : 0;
}
