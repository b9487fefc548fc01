/*
 * tests/mpi/driver.c - main, the MPI bootstrap, and what every mode shares
 * (driver.h says what the program is).
 *
 *   mpi-scalapack solve [--n 37,100,257] [--quick] [--routines potrs,..] [--dtypes f64,..]
 *                                                    every routine x dtype x n
 * Every mode takes --seed S (repeat a run's inputs) and --direct (no call
 * through muster_solve_comm: the provider's collective_solve only).
 *   mpi-scalapack errors                             failures, the same on every rank
 *   mpi-scalapack general [--n 37,100] [--dtypes ..]  getrs, gels, potrs log det: results
 *                                                    and failures (general.c)
 *   mpi-scalapack loop --n N --seconds S [--deadline D]   solves until killed
 *   mpi-scalapack whoami [--n ..]                    where each rank runs, then a quick solve
 *   mpi-scalapack bench --routine R --n N,.. --tiles T,.. [--reps K]   seconds per tile
 */
#include "mpi/driver.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>

/* ---- a bootstrap over a sub-communicator (the runtime's is over the world) ---- */

static int sub_allgather(void *ctx, const void *mine, void *all, size_t len, char *err,
                         size_t errlen) {
  MPI_Comm comm = *(MPI_Comm *)ctx;
  int rc = MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, comm);
  if (rc == MPI_SUCCESS) return 0;
  snprintf(err, errlen, "MPI_Allgather failed (%d)", rc);
  return MUSTER_EPROVIDER;
}

void drv_boot(muster_bootstrap_t *b, MPI_Comm *comm, uint64_t key) {
  int rank = 0, size = 0;
  MPI_Comm_rank(*comm, &rank);
  MPI_Comm_size(*comm, &size);
  *b = (muster_bootstrap_t){.rank = rank,
                            .size = size,
                            .kind = "mpi",
                            .key = key,
                            .mpi_comm = comm,
                            .ctx = comm,
                            .allgather = sub_allgather};
}

/* ---- the runtime's ways in ------------------------------------------------------------ */

/* The public communicator, the runtime's own MPI bootstrap for direct
 * calls, and scalapack loaded by the registry (from the provider folder
 * beside this program's build, as for any program). */
static void open_runtime(drv_t *d) {
  muster_comm_opts_t o = {.kind = "mpi"};
  if (muster_comm_open(&o, &d->mc) != 0)
    fprintf(stderr, "muster_comm_open: %s\n", muster_last_error());
  ASSERT(d->mc != NULL);
  ASSERT(muster_comm_rank(d->mc) == d->rank && muster_comm_size(d->mc) == d->size);
  int r = -1, n = -1;
  ASSERT_OK(muster__mpi_open(&d->mpi, &r, &n));
  ASSERT(r == d->rank && n == d->size);
  muster__mpi_boot(d->mpi, &d->boot, 1);
  if (muster__provider_get(MUSTER_POTRS, MUSTER_F64, MUSTER_MEM_HOST, "scalapack", NULL, d->size,
                           &d->slp) != 0)
    fprintf(stderr, "loading scalapack: %s\n", muster_last_error());
  ASSERT(d->slp != NULL);
  d->sl = d->slp->v;
  d->sl_ctx = d->slp->ctx;
  ASSERT_EQ(d->sl->kind, MUSTER_PROVIDER_COLLECTIVE);
}

static void close_runtime(drv_t *d) {
  ASSERT_OK(muster_comm_close(d->mc)); /* its release_comms */
  d->sl->release_comms(d->sl_ctx, d->boot.key);
  muster__provider_release(d->slp);
  muster__mpi_close(d->mpi);
}

/* ---- one call ------------------------------------------------------------------------ */

static muster_solve_args_t args_of(const drv_t *d, const lfx_t *fx) {
  return (muster_solve_args_t){.routine = fx->routine,
                               .dtype = fx->t,
                               .n = fx->n,
                               .nrhs = fx->nrhs,
                               .tile = d->tile,
                               .layout = fx->layout,
                               .flags = fx->flags,
                               .provider = "scalapack"};
}

int drv_solve_on(drv_t *d, lfx_t *fx, const muster_bootstrap_t *boot) {
  fx->info = -99;
  fx->err[0] = '\0';
  int64_t tile_used = -1;
  muster_dist_t dist = fx->layout == MUSTER_LAYOUT_CYCLIC
                           ? muster_layout_cyclic_dist(fx->n, fx->tile, fx->R, boot->rank, fx->lda)
                           : muster_layout_block_dist(fx->n, fx->R, boot->rank, fx->lda);
  muster_shape_t sh; /* gels: A has m = ldb rows, as the runtime's dist says */
  if (muster_routine_shape(fx->routine, fx->n, fx->nrhs, fx->ldb, &sh) == 0)
    dist.m = dist.mb = sh.a_rows;
  muster_collective_call_t cc = {
      .args = args_of(d, fx),
      .mine = &fx->shards[boot->rank],
      .dist = dist,
      .boot = boot,
      .info = &fx->info,
      .tile_used = &tile_used,
      .err = fx->err,
      .errlen = sizeof fx->err};
  atomic_store(&d->running, &cc);
  int rc = d->sl->collective_solve(d->sl_ctx, &cc);
  atomic_store(&d->running, NULL);
  if (rc == 0 && (tile_used < 1 || (d->tile > 0 && tile_used != d->tile))) {
    snprintf(fx->err, sizeof fx->err, "tile_used %" PRId64 ", asked for %" PRId64, tile_used,
             d->tile);
    return MUSTER_EPROVIDER;
  }
  return rc;
}

int drv_solve(drv_t *d, lfx_t *fx) {
  if (!d->via_comm || d->tile != 0) return drv_solve_on(d, fx, &d->boot);
  muster_solve_args_t a = args_of(d, fx);
  if (fx->layout == MUSTER_LAYOUT_CYCLIC) a.tile = fx->tile; /* the runtime's dist reads it */
  fx->info = -99;
  fx->err[0] = '\0';
  int rc = muster_solve_comm(d->mc, &a, &fx->shards[d->rank], &d->res);
  fx->info = d->res.info;
  if (rc < 0)
    snprintf(fx->err, sizeof fx->err, "%s", muster_last_error());
  else if (strcmp(d->res.provider, "scalapack") != 0 || d->res.tile < 1 ||
           (a.tile && d->res.tile != a.tile)) {
    snprintf(fx->err, sizeof fx->err,
             "result says provider %s, tile %" PRId64 " (args.tile %" PRId64 ")", d->res.provider,
             d->res.tile, a.tile);
    rc = MUSTER_EPROVIDER;
  }
  return rc;
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

void drv_say(char *why, size_t len, const char *fmt, ...) {
  if (why[0]) return; /* keep the first */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
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
  drv_t d = {.comm = MPI_COMM_WORLD, .via_comm = 1};
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  d.seed = (uint64_t)now.tv_sec * 1000003u + (uint64_t)now.tv_nsec; /* rank 0's counts */
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
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      d.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--direct"))
      d.via_comm = 0;
  }
  /* fresh inputs on every run, the same on every rank; --seed repeats a run */
  MPI_Bcast(&d.seed, 1, MPI_UINT64_T, 0, d.comm);
  if (d.rank == 0)
    printf("# seed %" PRIu64 " (--seed %" PRIu64 " repeats this run)\n", d.seed, d.seed);
  open_runtime(&d);
  d.lp = lfx_provider(&d.lp_ctx);
  int rc = 0;
  if (!strcmp(mode, "solve"))
    drv_mode_solve(&d, ns, nns, quick);
  else if (!strcmp(mode, "errors"))
    drv_mode_errors(&d);
  else if (!strcmp(mode, "general"))
    drv_mode_general(&d, ns, nns);
  else if (!strcmp(mode, "factors"))
    drv_mode_factors(&d);
  else if (!strcmp(mode, "dist"))
    drv_mode_dist(&d);
  else if (!strcmp(mode, "loop"))
    rc = drv_mode_loop(&d, n, seconds, deadline);
  else if (!strcmp(mode, "whoami"))
    mode_whoami(&d), drv_mode_solve(&d, ns, nns, 1);
  else if (!strcmp(mode, "bench"))
    drv_mode_bench(&d, routine, ns, nns, tiles, ntiles, reps);
  else {
    fprintf(stderr,
            "usage: %s solve|errors|general|factors|dist|loop|whoami|bench [--n N,..] [--quick] [--seconds S] "
            "[--deadline D] [--routine R] [--tiles T,..] [--reps K] [--routines R,..] "
            "[--dtypes T,..] [--seed S] [--direct]\n",
            argv[0]);
    rc = 2;
  }
  close_runtime(&d);
  d.lp->fini(d.lp_ctx);
  if (d.rank == 0 && d.cases)
    printf("mpi-scalapack np=%d %s: %d passed, %d failed\n", d.size, mode, d.passed, d.failed);
  MPI_Finalize();
  return rc ? rc : d.failed ? 1 : 0;
}
