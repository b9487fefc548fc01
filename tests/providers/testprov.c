/*
 * tests/providers/testprov.c - a provider for registry and solve tests,
 * built in several variants (tests/providers/SConscript):
 *   TP_NAME      backend name (default "testprov")
 *   TP_VERSION   marker: solve writes it into every element (real part) of
 *                every shard's b (potrs), w (syevd) or a (potri)
 *   TP_PRIORITY  priority
 *   TP_DTYPES    dtype bits
 *   TP_ABI       abi_version it claims (999: a provider of a future ABI)
 *   TP_NOSYM     export no muster_provider_v1 at all
 *   TP_SMALL     claim a struct_size smaller than v1's
 *   TP_MAX_SHARDS  max_shards
 *   TP_MEM_CUDA  take CUDA memory only (a stand-in GPU provider; never
 *                reached where no GPU works, the CLI fails before it)
 *   TP_V2        export muster_provider_v2 instead (testprov_v2.h has the
 *                v2 parts: estimate, the collective kind, and the knobs):
 *   TP_COLLECTIVE  kind collective (else leader)
 *   TP_RULES     layout_rules it claims (default MUSTER_LAYOUT_RULES_VERSION)
 *   TP_NO_HOOK   leave out the hook its kind needs (solve / collective_solve)
 *   TP_SPANS     spans (default threads|processes)
 *   TP_DEP       link libtpdep.so, found through RPATH $ORIGIN/../deps (a
 *                provider installed from a wheel finds what auditwheel
 *                bundled so)
 * Behaviour at run time (environment of the leader process):
 *   TESTPROV_ENTERED=PATH  solve first writes the leader's pid into PATH
 *                        (tests know it is inside the provider, and who)
 *   TESTPROV_GATE=PATH   solve waits while PATH exists (a long solve)
 *   TESTPROV_CRASH=kill|segv   solve raises SIGKILL / dereferences NULL
 *   TESTPROV_INFO=K      solve returns info K
 *   TESTPROV_UNAVAILABLE=NAME,...  the probe of those names fails (at load)
 *   TESTPROV_NOTE=TEXT             an available probe leaves TEXT as its note
 *   TESTPROV_ENGINE_VERSION=V      muster_provider_engine_version (every
 *                        variant exports it) says V; unset: not known
 *   TESTPROV_LIFE=PATH   init and fini append "init NAME" / "fini NAME"
 *                        to PATH (how often it was loaded and unloaded)
 * It does no linear algebra: it only proves which provider ran, and that
 * the leader reached every shard's memory.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "muster/provider.h"

#ifdef TP_DEP
int tp_dep_value(void); /* tpdep.c: libtpdep.so */
__attribute__((constructor)) static void tp_dep_touch(void) { (void)tp_dep_value(); }
#endif

#ifndef TP_NAME
#define TP_NAME "testprov"
#endif
#ifndef TP_VERSION
#define TP_VERSION 1
#endif
#ifndef TP_PRIORITY
#define TP_PRIORITY 10
#endif
#ifdef TP_ONLY_F64
#define TP_DTYPES (1u << MUSTER_F64)
#endif
#ifndef TP_DTYPES
#define TP_DTYPES MUSTER_ALL_DTYPES
#endif
#ifndef TP_MAX_SHARDS
#define TP_MAX_SHARDS MUSTER_MAX_RANKS
#endif
#ifndef TP_ABI
#define TP_ABI MUSTER_PROVIDER_V1_ABI
#endif

static void put(muster_dtype_t t, void *base, int64_t idx, double v) {
  switch (t) {
  case MUSTER_F32: ((float *)base)[idx] = (float)v; break;
  case MUSTER_F64: ((double *)base)[idx] = v; break;
  case MUSTER_C64: ((float *)base)[2 * idx] = (float)v; ((float *)base)[2 * idx + 1] = 0; break;
  default: ((double *)base)[2 * idx] = v; ((double *)base)[2 * idx + 1] = 0; break;
  }
}

static void fill(muster_dtype_t t, void *base, int64_t ld, int64_t rows, int64_t cols, double v) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) put(t, base, j * ld + i, v);
}

/* TESTPROV_UNAVAILABLE=name,name: those say "unavailable" (read at load) */
__attribute__((unused)) static int tp_probe(char *why, size_t len) {
  const char *off = getenv("TESTPROV_UNAVAILABLE");
  size_t nl = strlen(TP_NAME);
  for (const char *s = off; s && (s = strstr(s, TP_NAME)) != NULL; s += nl)
    if ((s == off || s[-1] == ',') && (s[nl] == ',' || s[nl] == '\0')) {
      snprintf(why, len, "TESTPROV_UNAVAILABLE names %s", TP_NAME);
      return MUSTER_EUNSUPPORTED;
    }
  const char *note = getenv("TESTPROV_NOTE"); /* what an available provider's probe may say */
  if (note) snprintf(why, len, "%s", note);
  return 0;
}

__attribute__((unused)) static int tp_solve(void *ctx, const muster_provider_call_t *c) {
  (void)ctx;
  const char *entered = getenv("TESTPROV_ENTERED");
  if (entered) {
    char tmp[4200], pid[24];
    snprintf(tmp, sizeof tmp, "%s.tmp", entered); /* rename: never seen half written */
    int fd = open(tmp, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd >= 0) {
      ssize_t w = write(fd, pid, (size_t)snprintf(pid, sizeof pid, "%d", (int)getpid()));
      (void)w;
      close(fd);
      rename(tmp, entered);
    }
  }
  const char *gate = getenv("TESTPROV_GATE");
  if (gate)
    while (access(gate, F_OK) == 0) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  const char *crash = getenv("TESTPROV_CRASH");
  if (crash && !strcmp(crash, "kill")) raise(SIGKILL);
  if (crash && !strcmp(crash, "segv")) {
    int *volatile nowhere = NULL;
    *nowhere = 1;
  }
  const muster_solve_args_t *a = &c->args;
  for (int r = 0; r < c->nshards; r++) {
    const muster_shard_t *s = &c->shards[r];
    if (a->routine == MUSTER_POTRS) fill(a->dtype, s->b, s->ldb, a->n, a->nrhs, TP_VERSION);
    if (a->routine == MUSTER_SYEVD) {
      for (int64_t i = 0; i < a->n; i++) {
        if (a->dtype == MUSTER_F32 || a->dtype == MUSTER_C64) ((float *)s->w)[i] = TP_VERSION;
        else ((double *)s->w)[i] = TP_VERSION;
      }
    }
    if (a->routine == MUSTER_POTRI) fill(a->dtype, s->a, s->lda, a->n, s->ncols, TP_VERSION);
  }
  const char *info = getenv("TESTPROV_INFO");
  *c->info = info ? atoll(info) : 0;
  return 0;
}

/* TESTPROV_LIFE=PATH: one line per init and fini, appended (O_APPEND:
 * whole lines whoever writes) */
static void tp_life(const char *what) {
  const char *path = getenv("TESTPROV_LIFE");
  if (!path) return;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char line[80];
  ssize_t w = write(fd, line, (size_t)snprintf(line, sizeof line, "%s %s\n", what, TP_NAME));
  (void)w;
  close(fd);
}

static char tp_ctx; /* what init hands the runtime: fini checks it gets it back */

__attribute__((unused)) static int tp_init(void **ctx, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  *ctx = &tp_ctx;
  tp_life("init");
  return 0;
}

__attribute__((unused)) static void tp_fini(void *ctx) { tp_life(ctx == &tp_ctx ? "fini" : "fini-bad-ctx"); }

/* The engine's version, for the cost table's "version" rows (provider.h) */
__attribute__((visibility("default"))) int muster_provider_engine_version(void *ctx, char *out, size_t cap) {
  (void)ctx;
  const char *v = getenv("TESTPROV_ENGINE_VERSION");
  if (!v) return MUSTER_ENOENT;
  snprintf(out, cap, "%s", v);
  return 0;
}

#if defined(TP_V2)
#include "testprov_v2.h"
#elif !defined(TP_NOSYM)
__attribute__((visibility("default"))) const muster_provider_v1_t muster_provider_v1 = {
    .abi_version = TP_ABI,
#ifdef TP_SMALL
    .struct_size = 16,
#else
    .struct_size = sizeof(muster_provider_v1_t),
#endif
    .name = TP_NAME,
    .description = "test provider",
    .priority = TP_PRIORITY,
    .routines = (1u << MUSTER_POTRS) | (1u << MUSTER_POTRI) | (1u << MUSTER_SYEVD),
    .dtypes = TP_DTYPES,
#ifdef TP_MEM_CUDA
    .mem_kinds = 1u << MUSTER_MEM_CUDA,
#else
    .mem_kinds = 1u << MUSTER_MEM_HOST,
#endif
    .max_shards = TP_MAX_SHARDS,
    .init = tp_init,
    .fini = tp_fini,
    .probe = tp_probe,
    .solve = tp_solve,
};
#else
__attribute__((visibility("default"))) int muster_provider_other = 1;
#endif
