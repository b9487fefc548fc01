/*
 * tests/unit/test_cost_version.c - cost table rows of an engine version
 * (cost.h rule 1b, docs/choice.md "Lookup"): "version" lines and their
 * refusals, the rows of the engine's major.minor first, another version's
 * only where it has none near (and the note says so), a table without
 * versions read as before; the provider telling its version through
 * muster_provider_engine_version (provider.h) to the choice; and
 * cusolvermp's shipped table on 0.9.1 against cusolverdn's model for syevd.
 */
#include <math.h>

#include "task.h"
#include "muster.h"
#include "registry/choice.h"
#include "registry/cost.h"
#include "providers/tp_util.h"
#include "test_dn_util.h"

static muster__cost_t *parse_ok(const char *text) {
  muster__cost_t *t = NULL;
  char why[256] = "";
  int rc = muster__cost_parse(text, "/x/v.cost", &t, why, sizeof why);
  if (rc) fprintf(stderr, "%s\n", why);
  ASSERT_EQ(rc, 0);
  return t;
}

static void parse_bad(const char *text, const char *expect) {
  muster__cost_t *t = NULL;
  char why[256] = "";
  ASSERT_EQ(muster__cost_parse(text, "/x/v.cost", &t, why, sizeof why), MUSTER_EINVAL);
  ASSERT(t == NULL);
  ASSERT_STR_CONTAINS(why, expect);
}

/* The seconds of (routine f64, ndevices, n) for an engine of version `ver`, note in note[400]. */
static double at(const muster__cost_t *t, const char *ver, int routine, int nd, int64_t n, char *note) {
  double s = -1;
  ASSERT_OK(muster__cost_lookup_ver(t, ver, routine, MUSTER_F64, nd, 1, n, routine == MUSTER_POTRS, &s, note, 400));
  return s;
}

TEST_IMPL(cost_version_parse) {
  ASSERT_EQ(muster__cost_version("0.9.1"), MUSTER__COST_VERSION(0, 9));
  ASSERT_EQ(muster__cost_version("0.8.0.3126"), MUSTER__COST_VERSION(0, 8));
  ASSERT_EQ(muster__cost_version("12.34"), MUSTER__COST_VERSION(12, 34));
  static const char *const bad[] = {"1", "", "0.", "0.9.", ".9", "v0.9", "0.9a", "0.1000", "0..9", "0.9 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) ASSERT_EQ(muster__cost_version(bad[i]), -1);
  ASSERT_EQ(muster__cost_version(NULL), -1);
  /* a version line tags the rows after it, up to the next one */
  muster__cost_t *t = parse_ok("potrs f64 2 8 1 0.1\n"
                               "version 0.8.0.3126   # cuSOLVERMp\n"
                               "potrs f64 2 8 1 0.2\n"
                               "\tversion\t0.9.1\n"
                               "potrs f64 2 8 1 0.3\npotrs f64 4 8 1 0.25\n");
  ASSERT_EQ(t->nrows, 4);
  ASSERT_EQ(t->rows[0].version, -1);
  ASSERT_EQ(t->rows[1].version, MUSTER__COST_VERSION(0, 8));
  ASSERT_EQ(t->rows[2].version, MUSTER__COST_VERSION(0, 9));
  ASSERT_EQ(t->rows[3].version, MUSTER__COST_VERSION(0, 9));
  /* the same point in two versions: both kept, neither replaces the other */
  char note[400];
  ASSERT(at(t, "0.8.0", MUSTER_POTRS, 2, 8, note) == 0.2);
  ASSERT(at(t, "0.9.1", MUSTER_POTRS, 2, 8, note) == 0.3);
  muster__cost_free(t);
  /* a bad version line refuses the whole file, naming its line */
  parse_bad("potrs f64 2 8 1 0.1\nversion\n", "v.cost:2: bad version line: want 'version MAJOR.MINOR[.PATCH]'");
  parse_bad("version 1\n", ":1: bad version line");
  parse_bad("version 0.9 0.8\n", ":1: bad version line");
  parse_bad("# x\nversion v0.9\npotrs f64 2 8 1 0.1\n", ":2: bad version line: want 'version MAJOR.MINOR[.PATCH]', "
                                                          "got 'v0.9'");
  parse_bad("versionx 0.9\n", "v.cost:1: 2 fields, want 6 or 7"); /* not a version line: a row */
  /* an unmeasured table may say its version; it still has no row */
  t = parse_ok("version 0.9.1\nunmeasured: no GPU yet\n");
  ASSERT(t->unmeasured && t->nrows == 0);
  muster__cost_free(t);
  return 0;
}

static const char *const two_releases = "# 0.8\n"
                                        "version 0.8.0.3126\n"
                                        "syevd f64 2 8192 0 1.6\n"
                                        "syevd f64 4 8192 0 2.0\n"
                                        "potrs f64 2 16384 1 0.06\n"
                                        "potrs f64 4 16384 1 0.05\n"
                                        "version 0.9.1\n"
                                        "syevd f64 4 8192 0 1.2\n"
                                        "syevd f64 4 16384 0 2.9\n";

TEST_IMPL(cost_version_lookup) {
  char note[400];
  muster__cost_t *t = parse_ok(two_releases);
  /* the engine's own release: its rows, nothing more said */
  ASSERT(at(t, "0.9.1", MUSTER_SYEVD, 4, 16384, note) == 2.9);
  ASSERT(!strcmp(note, "cost table v.cost: measured at n=16384"));
  ASSERT(at(t, "0.9.0", MUSTER_SYEVD, 4, 8192, note) == 1.2); /* major.minor decides */
  ASSERT(!strcmp(note, "cost table v.cost: measured at n=8192"));
  /* 0.8 loaded: 0.8's rows, though 0.9's are measured at that n */
  ASSERT(at(t, "0.8.0", MUSTER_SYEVD, 4, 8192, note) == 2.0);
  ASSERT(!strcmp(note, "cost table v.cost: measured at n=8192"));
  ASSERT(fabs(at(t, "0.8.0", MUSTER_SYEVD, 4, 16384, note) - 16.0) < 1e-9); /* one point: slope 3 */
  ASSERT_STR_CONTAINS(note, "extrapolated above the largest measured n=8192 with slope 3.00");
  ASSERT(!strstr(note, "version"));
  /* 0.9.1 has no row near 2 devices (4 only): 0.8's, and the note says so */
  ASSERT(at(t, "0.9.1", MUSTER_SYEVD, 2, 8192, note) == 1.6);
  ASSERT(!strcmp(note, "cost table v.cost: measured at n=8192; rows of version 0.8: the loaded 0.9.1 has none "
                       "near ndevices=2"));
  /* ... nor of potrs at all */
  ASSERT(at(t, "0.9.1", MUSTER_POTRS, 4, 16384, note) == 0.05);
  ASSERT_STR_CONTAINS(note, "; rows of version 0.8: the loaded 0.9.1 has no potrs f64 row");
  /* 3 devices: 0.8 models it from 2 and 4, 0.9 cannot */
  ASSERT(at(t, "0.9.1", MUSTER_SYEVD, 3, 8192, note) > 1.6);
  ASSERT_STR_CONTAINS(note, "interpolated in ndevices from 2 and 4");
  ASSERT_STR_CONTAINS(note, "; rows of version 0.8: the loaded 0.9.1 has none near ndevices=3");
  /* version unknown (no function, or not known yet; a string that is not a
   * version): the newest release's rows, said so */
  ASSERT(at(t, NULL, MUSTER_SYEVD, 4, 16384, note) == 2.9);
  ASSERT_STR_CONTAINS(note, "; rows of version 0.9: the engine's version is not known");
  ASSERT(at(t, "unknown", MUSTER_SYEVD, 4, 16384, note) == 2.9);
  double s = 0;
  ASSERT_OK(muster__cost_lookup(t, MUSTER_SYEVD, MUSTER_F64, 4, 16384, 0, &s, note, 400));
  ASSERT(s == 2.9);
  /* a release with no row: the nearest release's (1.0 is nearer 0.9 than 0.8) */
  ASSERT(at(t, "1.0", MUSTER_SYEVD, 4, 8192, note) == 1.2);
  ASSERT_STR_CONTAINS(note, "; rows of version 0.9: the loaded 1.0 has no syevd f64 row");
  ASSERT(at(t, "0.7", MUSTER_SYEVD, 4, 8192, note) == 2.0);
  ASSERT_STR_CONTAINS(note, "; rows of version 0.8: the loaded 0.7 has no syevd f64 row");
  muster__cost_free(t);
  /* near nowhere (0.9: 4 GPUs, 0.8: 2): the engine's own rows, and the
   * note of the nearest count measured */
  t = parse_ok("version 0.8\nsyevd f64 2 8192 0 1.6\nversion 0.9\nsyevd f64 4 8192 0 1.2\n");
  ASSERT(at(t, "0.9.1", MUSTER_SYEVD, 8, 8192, note) == 1.2);
  ASSERT(!strcmp(note, "cost table v.cost: measured at n=8192; one device count measured: nearest ndevices=4"));
  ASSERT(at(t, "0.8.0", MUSTER_SYEVD, 8, 8192, note) == 1.6);
  muster__cost_free(t);
  return 0;
}

/* A table without version lines reads as it did before versions existed,
 * whatever version the engine says; rows without a version come before
 * another release's. */
TEST_IMPL(cost_version_old_tables) {
  static const char *const old = "potrs f64 2 8192 1 0.0098\npotrs f64 2 16384 1 0.0446\n"
                                 "potrs f64 4 16384 1 0.03\nsyevd f64 1 8192 0 0.62\n";
  muster__cost_t *t = parse_ok(old);
  static const struct {
    int routine, nd;
    int64_t n;
  } calls[] = {{MUSTER_POTRS, 2, 12000}, {MUSTER_POTRS, 3, 16384}, {MUSTER_POTRS, 8, 65536},
               {MUSTER_SYEVD, 4, 4096},  {MUSTER_POTRS, 1, 100}};
  static const char *const vers[] = {"0.9.1", "1.0", "x"};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    double want = 0, got;
    char wnote[400], note[400];
    ASSERT_OK(muster__cost_lookup(t, calls[i].routine, MUSTER_F64, calls[i].nd, calls[i].n,
                                  calls[i].routine == MUSTER_POTRS, &want, wnote, sizeof wnote));
    for (size_t v = 0; v < sizeof vers / sizeof vers[0]; v++) {
      got = at(t, vers[v], calls[i].routine, calls[i].nd, calls[i].n, note);
      ASSERT(got == want);
      ASSERT(!strcmp(note, wnote));
    }
    ASSERT(!strstr(wnote, "version"));
  }
  muster__cost_free(t);
  /* rows without a version beside 0.9's: for 0.8 (no row of its own) the
   * rows without a version, said nothing; for 0.9.1 on 2 GPUs (0.9 has 4
   * only) they too, said so */
  char note[400];
  t = parse_ok("syevd f64 2 8192 0 1.5\nsyevd f64 4 8192 0 1.9\nversion 0.9.1\nsyevd f64 4 8192 0 1.2\n");
  ASSERT(at(t, "0.8.0", MUSTER_SYEVD, 4, 8192, note) == 1.9);
  ASSERT(!strcmp(note, "cost table v.cost: measured at n=8192"));
  ASSERT(at(t, "0.9.1", MUSTER_SYEVD, 4, 8192, note) == 1.2);
  ASSERT(at(t, "0.9.1", MUSTER_SYEVD, 2, 8192, note) == 1.5);
  ASSERT_STR_CONTAINS(note, "; rows of no recorded version: the loaded 0.9.1 has none near ndevices=2");
  ASSERT(at(t, NULL, MUSTER_SYEVD, 4, 8192, note) == 1.9); /* unknown: no version before the newest */
  ASSERT(!strcmp(note, "cost table v.cost: measured at n=8192"));
  muster__cost_free(t);
  return 0;
}

/* The version reaches the choice from the provider's
 * muster_provider_engine_version: the test provider says
 * $TESTPROV_ENGINE_VERSION (provider.h, testprov.c), asked at every choice. */
TEST_IMPL(cost_version_choice) {
  char dir[256], path[400], name[32], reason[MUSTER_MAX_REASON_FULL];
  tp_env_fresh(dir, sizeof dir);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  snprintf(path, sizeof path, "%s/testprov.cost", dir);
  tp_write_file(path, "version 1.2.0\npotrs f64 2 8 2 0.002\n"
                      "version 1.3\npotrs f64 2 8 2 0.003\npotrs f64 4 8 2 0.0015\n");
  muster_provider_query_t q;
  memset(&q, 0, sizeof q);
  q.routine = MUSTER_POTRS;
  q.dtype = MUSTER_F64;
  q.n = 8;
  q.nrhs = 2;
  q.nranks = q.ndevices = 2;
  static const struct {
    const char *ver; /* NULL: unset */
    int nranks;
    const char *want;
  } cases[] = {
      {"1.2.5", 2, "expected 0.002 s (cost table testprov.cost: measured at n=8)"},
      {"1.3.0", 2, "expected 0.003 s (cost table testprov.cost: measured at n=8)"},
      {"1.4", 2, "expected 0.003 s (cost table testprov.cost: measured at n=8; rows of version 1.3: the loaded 1.4 "
                 "has no potrs f64 row)"},
      {NULL, 2, "expected 0.003 s (cost table testprov.cost: measured at n=8; rows of version 1.3: the engine's "
                "version is not known)"},
      {"1.2", 4, "expected 0.0015 s (cost table testprov.cost: measured at n=8; rows of version 1.3: the loaded "
                 "1.2 has none near ndevices=4)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (cases[i].ver) setenv("TESTPROV_ENGINE_VERSION", cases[i].ver, 1);
    else unsetenv("TESTPROV_ENGINE_VERSION");
    q.nranks = q.ndevices = cases[i].nranks;
    ASSERT_OK(muster_provider_choose(&q, NULL, name, sizeof name, reason, sizeof reason));
    ASSERT(!strcmp(name, "testprov"));
    fprintf(stderr, "%s: %s\n", cases[i].ver ? cases[i].ver : "(unset)", reason);
    ASSERT_STR_CONTAINS(reason, cases[i].want);
  }
  unsetenv("TESTPROV_ENGINE_VERSION");
  test_remove_tree(dir);
  return 0;
}

/* What the cusolvermp stand-in below says its engine is. */
static const char *mp_engine;

static int mp_engine_version(void *ctx, char *out, size_t cap) {
  (void)ctx;
  if (!mp_engine) return MUSTER_ENOENT;
  snprintf(out, cap, "%s", mp_engine);
  return 0;
}

/* Issue 24: syevd f64 n = 16384 on 4 GPUs, one process per GPU.  The
 * choice weighs cusolverdn's model (the whole matrix onto one GPU) against
 * cusolvermp's shipped table: with 0.9.1 loaded cusolvermp's row (2.92 s,
 * measured) must come out below cusolverdn's estimate (it ran 3.23 s), so
 * cusolvermp wins; with 0.8 its rows (8192 only, 2.07 s there) scale far
 * above it and cusolverdn wins, as the default did before the table knew
 * versions (10.8% over the best engine). */
TEST_IMPL(cost_version_mp_beats_dn_syevd_4gpu) {
  void *h, *ctx;
  const muster_provider_v2_t *dn = dn_open(&h, &ctx);
  if (!dn) return 0;
  char why[256], path[512];
  muster__cost_t *t = NULL;
  test_data_path(path, sizeof path, "providers/cusolvermp/cusolvermp.cost");
  ASSERT_OK(muster__cost_read(path, &t, why, sizeof why));
  /* cusolverdn as the registry holds it; cusolvermp a stand-in with its
   * table and no time model (its estimate has none: seconds < 0) */
  muster__provider_t pdn = {.v = dn, .ctx = ctx, .available = 1, .name = "cusolverdn"};
  muster_provider_v2_t vmp = {.abi_version = MUSTER_PROVIDER_V2_ABI, .kind = MUSTER_PROVIDER_COLLECTIVE,
                              .name = "cusolvermp", .priority = 70, .routines = 1u << MUSTER_SYEVD,
                              .dtypes = MUSTER_ALL_DTYPES, .mem_kinds = 1u << MUSTER_MEM_CUDA,
                              .spans = MUSTER_SPAN_PROCESSES | MUSTER_SPAN_NODES};
  muster__provider_t pmp = {.v = &vmp, .available = 1, .name = "cusolvermp", .cost = t,
                            .engine_version = mp_engine_version};
  static const int four[4] = {0, 1, 2, 3};
  query_t x;
  dn_query(&x, MUSTER_SYEVD, MUSTER_F64, 16384, 4, four, 130.0);
  x.q.span = MUSTER_SPAN_PROCESSES;
  x.q.nnodes = 1;
  ASSERT_EQ(x.q.ndevices, 4);
  muster__provider_t *both[] = {&pdn, &pmp};
  muster__choice_in_t in = {.q = &x.q, .kinds = (1u << MUSTER_PROVIDER_LEADER) | (1u << MUSTER_PROVIDER_COLLECTIVE)};
  static muster__choice_t ch; /* large: not on the stack */
  static const char *const engines[] = {"0.9.1", "0.8.0"};
  for (int e = 0; e < 2; e++) {
    mp_engine = engines[e];
    ASSERT_OK(muster__choice_rank(&in, "", "MUSTER_PROVIDER", both, 2, &ch));
    ASSERT_EQ(ch.n, 2);
    const muster__cand_t *mp = ch.c[0].p == &pmp ? &ch.c[0] : &ch.c[1], *d = ch.c[0].p == &pdn ? &ch.c[0] : &ch.c[1];
    ASSERT(mp->ok && mp->timed && d->ok && d->timed && d->estimated);
    fprintf(stderr, "syevd f64 16384 on 4 GPUs, cuSOLVERMp %s: cusolvermp %.3f s (%s), cusolverdn %.3f s; %s\n",
            mp_engine, mp->seconds, mp->note, d->seconds, ch.reason);
    if (e == 0) {
      ASSERT(fabs(mp->seconds - 2.9235) < 1e-4);
      ASSERT(!strcmp(mp->note, "cost table cusolvermp.cost: measured at n=16384"));
      ASSERT(mp->seconds < d->seconds);
      ASSERT(!strcmp(ch.c[0].p->name, "cusolvermp"));
    } else {
      ASSERT(mp->seconds > d->seconds);
      ASSERT(!strcmp(ch.c[0].p->name, "cusolverdn"));
    }
  }
  mp_engine = NULL;
  muster__cost_free(t);
  dn_close(dn, h, ctx);
  return 0;
}
