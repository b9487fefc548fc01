/*
 * tests/mpi/driver.c - main, the MPI bootstrap, and what every mode shares
 * (driver.h says what the program is).
 *
 *   mpi-scalapack solve [--n 37,100,257] [--quick] [--routines potrs,..] [--dtypes f64,..]
 *                                                    every routine x dtype x n
 *   mpi-scalapack errors                             failures, the same on every rank
 *   mpi-scalapack loop --n N --seconds S [--deadline D]   solves until killed
 *   mpi-scalapack whoami [--n ..]                    where each rank runs, then a quick solve
 *   mpi-scalapack bench --routine R --n N,.. --tiles T,.. [--reps K]   seconds per tile
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>

#include "mpi/driver.h"

/* ---- the bootstrap the runtime's MPI bootstrap will hand the provider ------- */

static int mpi_allgather(void *ctx, const void *mine, void *all, size_t len, char *err,
                         size_t errlen) {
  MPI_Comm comm = *(MPI_Comm *)ctx;
  int rc = MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, comm);
  if (rc == MPI_SUCCESS) return 0;
  snprintf(err, errlen, "MPI_Allgather failed (%d)", rc);
  return MUSTER_EPROVIDER;
}

void drv_boot(drv_t *d, muster_bootstrap_t *b, MPI_Comm *comm, uint64_t key) {
  (void)d;
  int rank = 0, size = 0;
  MPI_Comm_rank(*comm, &rank);
  MPI_Comm_size(*comm, &size);
  *b = (muster_bootstrap_t){.rank = rank,
                            .size = size,
                            .kind = "mpi",
                            .key = key,
                            .mpi_comm = comm,
                            .ctx = comm,
                            .allgather = mpi_allgather};
}

/* ---- loading the providers -------------------------------------------------------- */

static const muster_provider_v2_t *load_scalapack(void **ctx) {
  void *so = lfx_open_provider("scalapack.so");
  const muster_provider_v2_t *p = dlsym(so, MUSTER_PROVIDER_SYMBOL_V2);
  ASSERT(p != NULL);
  ASSERT_EQ(p->abi_version, MUSTER_PROVIDER_V2_ABI);
  ASSERT_EQ(p->struct_size, sizeof(muster_provider_v2_t));
  ASSERT_EQ(p->kind, MUSTER_PROVIDER_COLLECTIVE);
  ASSERT_EQ(p->layout_rules, MUSTER_LAYOUT_RULES_VERSION);
  char err[256] = "";
  ASSERT_EQ(p->probe(err, sizeof err), 0);
  ASSERT_EQ(p->init(ctx, err, sizeof err), 0);
  return p;
}

/* ---- one call ------------------------------------------------------------------------ */

muster_dist_t drv_dist(const lfx_t *fx, int rank) {
  if (fx->layout == MUSTER_LAYOUT_CYCLIC)
    return muster_layout_cyclic_dist(fx->n, fx->tile, fx->R, rank, fx->lda);
  return muster_layout_block_dist(fx->n, fx->R, rank, fx->lda);
}

int drv_solve(drv_t *d, lfx_t *fx, const muster_bootstrap_t *boot) {
  if (!boot) boot = &d->boot;
  fx->info = -99;
  fx->err[0] = '\0';
  muster_collective_call_t cc = {.args = {.routine = fx->routine,
                                          .dtype = fx->t,
                                          .n = fx->n,
                                          .nrhs = fx->nrhs,
                                          .tile = d->tile,
                                          .layout = fx->layout,
                                          .flags = fx->flags,
                                          .provider = "scalapack"},
                                 .mine = &fx->shards[boot->rank],
                                 .dist = drv_dist(fx, boot->rank),
                                 .boot = boot,
                                 .info = &fx->info,
                                 .err = fx->err,
                                 .errlen = sizeof fx->err};
  return d->sl->collective_solve(d->sl_ctx, &cc);
}

void drv_share(drv_t *d, lfx_t *fx) {
  muster_layout_geom_t L;
  ASSERT_EQ(
      muster_layout_geom_init(&L, fx->n, fx->layout == MUSTER_LAYOUT_CYCLIC ? fx->tile : 1, fx->R),
      0);
  for (int r = 0; r < d->size; r++) {
    muster_shard_t *s = &fx->shards[r];
    int64_t cols = fx->layout == MUSTER_LAYOUT_CYCLIC ? L.local_cols : L.block_cols;
    MPI_Bcast(s->a, (int)((size_t)(cols * fx->lda) * fx->esz), MPI_BYTE, r, d->comm);
    if (s->b) MPI_Bcast(s->b, (int)((size_t)(fx->ldb * fx->nrhs) * fx->esz), MPI_BYTE, r, d->comm);
    if (s->w) MPI_Bcast(s->w, (int)((size_t)fx->n * sizeof(double)), MPI_BYTE, r, d->comm);
  }
}

void drv_idle_barrier(drv_t *d) {
  MPI_Request req;
  int done = 0;
  MPI_Ibarrier(d->comm, &req);
  for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE)) {
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

int drv_case(drv_t *d, int ok, const char *why, const char *fmt, ...) {
  char name[200], mine[600], *all = NULL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  snprintf(mine, sizeof mine, "%s", ok ? "" : (why && *why ? why : "failed"));
  if (d->rank == 0) all = malloc(sizeof mine * (size_t)d->size);
  int all_ok = 0;
  drv_idle_barrier(d); /* rank 0 may still be checking */
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, d->comm);
  MPI_Gather(mine, sizeof mine, MPI_CHAR, all, sizeof mine, MPI_CHAR, 0, d->comm);
  d->cases++;
  if (all_ok)
    d->passed++;
  else
    d->failed++;
  if (d->rank == 0) {
    if (all_ok) {
      printf("ok %d - %s\n", d->cases, name);
    } else {
      int r = 0;
      while (r < d->size && all[r * sizeof mine] == '\0') r++;
      printf("not ok %d - %s: rank %d: %s\n", d->cases, name, r, &all[r * sizeof mine]);
    }
    fflush(stdout);
    free(all);
  }
  return all_ok;
}

/* ---- whoami: proof of where each rank runs (the multi-host test) ------------------------- */

static void mode_whoami(drv_t *d) {
  char me[256], host[64] = "?", net[64] = "?";
  struct stat st = {0};
  gethostname(host, sizeof host - 1);
  ssize_t k = readlink("/proc/self/ns/net", net, sizeof net - 1);
  net[k > 0 ? k : 0] = '\0';
  stat("/dev/shm", &st);
  snprintf(me, sizeof me, "rank %d host %s netns %s shm-dev %lu", d->rank, host, net,
           (unsigned long)st.st_dev);
  char *all = d->rank == 0 ? malloc(sizeof me * (size_t)d->size) : NULL;
  MPI_Gather(me, sizeof me, MPI_CHAR, all, sizeof me, MPI_CHAR, 0, d->comm);
  for (int r = 0; d->rank == 0 && r < d->size; r++) printf("whoami %s\n", &all[r * sizeof me]);
  fflush(stdout);
  free(all);
}

/* "potrs,syevd" or "f32,c128" -> bits (1u << value) of the names parsed by parse */
static unsigned parse_names(char *list, int (*parse)(const char *, int *)) {
  unsigned bits = 0;
  for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    int v = 0;
    ASSERT_OK(parse(tok, &v));
    bits |= 1u << v;
  }
  return bits;
}

static int routine_of(const char *s, int *v) {
  muster_routine_t r;
  int rc = muster_routine_from_name(s, &r);
  *v = (int)r;
  return rc;
}

static int dtype_of(const char *s, int *v) {
  muster_dtype_t t;
  int rc = muster_dtype_from_name(s, &t);
  *v = (int)t;
  return rc;
}

/* "37,100,257" -> ns */
static int parse_ns(const char *s, int64_t *ns, int cap) {
  int k = 0;
  for (char *end; *s && k < cap; s = *end ? end + 1 : end) {
    ns[k++] = strtoll(s, &end, 10);
    if (end == s) break;
  }
  return k;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  drv_t d = {.comm = MPI_COMM_WORLD};
  MPI_Comm_rank(d.comm, &d.rank);
  MPI_Comm_size(d.comm, &d.size);
  const char *mode = argc > 1 ? argv[1] : "solve";
  int64_t ns[8] = {37, 100, 257}, n = 1200, tiles[8] = {32, 64};
  int nns = 3, quick = 0, ntiles = 2, reps = 3;
  muster_routine_t routine = MUSTER_POTRS;
  double seconds = 60, deadline = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) {
      nns = parse_ns(argv[++i], ns, 8);
      n = ns[0];
    } else if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--tiles") && i + 1 < argc)
      ntiles = parse_ns(argv[++i], tiles, 8);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--routines") && i + 1 < argc)
      d.routines = parse_names(argv[++i], routine_of);
    else if (!strcmp(argv[i], "--dtypes") && i + 1 < argc)
      d.dtypes = parse_names(argv[++i], dtype_of);
    else if (!strcmp(argv[i], "--routine") && i + 1 < argc)
      ASSERT_OK(muster_routine_from_name(argv[++i], &routine));
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--deadline") && i + 1 < argc)
      deadline = atof(argv[++i]);
  }
  d.sl = load_scalapack(&d.sl_ctx);
  d.lp = lfx_provider(&d.lp_ctx);
  drv_boot(&d, &d.boot, &d.comm, 1);
  int rc = 0;
  if (!strcmp(mode, "solve"))
    drv_mode_solve(&d, ns, nns, quick);
  else if (!strcmp(mode, "errors"))
    drv_mode_errors(&d);
  else if (!strcmp(mode, "loop"))
    rc = drv_mode_loop(&d, n, seconds, deadline);
  else if (!strcmp(mode, "whoami"))
    mode_whoami(&d), drv_mode_solve(&d, ns, nns, 1);
  else if (!strcmp(mode, "bench"))
    drv_mode_bench(&d, routine, ns, nns, tiles, ntiles, reps);
  else {
    fprintf(stderr,
            "usage: %s solve|errors|loop|whoami|bench [--n N,..] [--quick] [--seconds S] "
            "[--deadline D] [--routine R] [--tiles T,..] [--reps K] [--routines R,..] "
            "[--dtypes T,..]\n",
            argv[0]);
    rc = 2;
  }
  d.sl->release_comms(d.sl_ctx, 0);
  d.sl->fini(d.sl_ctx);
  d.lp->fini(d.lp_ctx);
  if (d.rank == 0 && d.cases)
    printf("mpi-scalapack np=%d %s: %d passed, %d failed\n", d.size, mode, d.passed, d.failed);
  MPI_Finalize();
  return rc ? rc : d.failed ? 1 : 0;
}
