/*
 * providers/cusolvermp/version.h - which cuSOLVERMp releases the provider
 * runs, with which NCCL and cuBLASMp, and the version arithmetic behind
 * that choice.  Pure functions of numbers and strings (version.c): no CUDA,
 * no NCCL, no dlopen, so the rules are unit-tested on any machine
 * (tests/unit/test_mp_version.c links version.c's host object).
 *
 * A version is one integer, major * 10000 + minor * 100 + patch:
 * cuSOLVERMp 0.8.0 is 800, 0.9.1 is 901, cuBLASMp 0.10.0 is 1000, NCCL
 * 2.28.9 is 22809 (ncclGetVersion's own code since NCCL 2.9).  0 means
 * unknown.
 *
 * The releases (mp_releases in version.c; the requirements are those of
 * the wheels' metadata and of the symbols each library imports, checked on
 * 0.8.0.3126 and 0.9.1.9318):
 *   0.8.x  NCCL >= 2.27 (it imports ncclCommWindowRegister); no cuBLASMp
 *   0.9.x  NCCL >= 2.29 (ncclCommQueryProperties, ncclDevCommCreate) and
 *          libcublasmp.so.0 from cuBLASMp >= 0.10, < 0.11
 * Any other release is refused: the provider is built against the 0.8
 * header, whose prototypes of every function it calls are unchanged in
 * 0.9.1 (compared), and nothing is known of later ones.  0.9 adds
 * cusolverMpGesvd and cusolverMpPolar (declared from the 0.9.1 header,
 * mpapi.h): gesvd and polar need it (svd_polar).
 */
#ifndef MUSTER_MP_VERSION_H
#define MUSTER_MP_VERSION_H

#include <stddef.h>

#define MP_HIDDEN __attribute__((visibility("hidden")))

/* major.minor.patch -> one integer (see above). */
#define MP_VER(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))

/* What one release series needs and allows. */
typedef struct mp_release {
  int first, last;       /* versions of the series, inclusive               */
  int nccl_min;          /* oldest NCCL it runs with                        */
  int cublasmp_min;      /* oldest cuBLASMp it needs, 0: none               */
  int cublasmp_last;     /* newest cuBLASMp it takes                        */
  int potrs_nrhs;        /* right-hand sides one cusolverMpPotrs may take
                            (the documentation: "only supports NRHS=1")     */
  int values_only;       /* cusolverMpSyevd takes jobz "N" (documented)     */
  int qr_grids;          /* its QR (Geqrf, Ormqr, Gels) was seen right on
                            more than one process: gels runs there only
                            then (mp_refused, plan.h)                        */
  int lu_columns;        /* its Getrf was seen right on a P x 1 grid (P > 1):
                            getrs runs on one only then (mp_refused)         */
  int geqrf_grids;       /* its Geqrf + Orgqr (geqrf, qr.c) were seen right
                            on 1 x Q grids (Q > 1): geqrf runs on more than
                            one process only then, and on 1 x Q grids only
                            (mp_refused), unless MUSTER_MP_QR_GRIDS=1       */
  int nonblocking_fails; /* its solvers were seen failing on a non-blocking
                            NCCL communicator on more than one process: it
                            is refused there (mp_refused; the switch is
                            MUSTER_MP_NCCL_BLOCKING)                         */
  int svd_polar;         /* it has cusolverMpGesvd and cusolverMpPolar (0.9
                            and later; the loader then requires their
                            symbols): gesvd and polar run only there
                            (mp_refused)                                      */
  const char *label;     /* "0.8"                                           */
} mp_release_t;

/* "0.8.0.3126", "2.28.9", "0.10.0.3695.post1" -> *ver (fields past the
 * third are ignored).  0, or -1 when s does not start with
 * number.number (patch defaults to 0). */
MP_HIDDEN int mp_ver_parse(const char *s, int *ver);

/* "0.8.0" into buf (len bytes); "unknown" for 0.  Returns buf. */
MP_HIDDEN const char *mp_ver_str(int ver, char *buf, size_t len);

/* cusolverMpGetVersion's code -> a version.  0.8 encodes major * 1000 +
 * minor * 100 + patch, 0.9 major * 10000 + minor * 100 + patch: for major
 * 0 (every release so far) both are minor * 100 + patch. */
MP_HIDDEN int mp_ver_from_solver_code(int code);

/* The release series holding ver, or NULL. */
MP_HIDDEN const mp_release_t *mp_release_of(int ver);

/* Can cuSOLVERMp `solver` run with NCCL `nccl` and cuBLASMp `cublasmp`
 * (0: not found / not known)?  0, or -1 with the reason in why ("needs NCCL
 * >= 2.29, this process has 2.28.9").  An unknown solver version is
 * judged later (0 here); an unknown cuBLASMp for a release that needs one
 * is accepted too (the dynamic loader has found libcublasmp.so.0 by then),
 * and *provisional set to 1 in both cases (when provisional is not NULL). */
MP_HIDDEN int mp_compat(int solver, int nccl, int cublasmp, int *provisional, char *why, size_t len);

/* The version in the name of a wheel's metadata folder for package
 * `dist` ("nvidia_cusolvermp_cu13"): "nvidia_cusolvermp_cu13-0.8.0.3126.dist-info"
 * -> 800.  0 when the name is another package's or carries no version. */
MP_HIDDEN int mp_ver_from_distinfo(const char *dirname, const char *dist);

#endif
