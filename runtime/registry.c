/*
 * runtime/registry.c - the provider registry.
 *
 * Index: an RCU lock-free hash table (liburcu rculfhash) whose key is the
 * routine name; one node per (routine, backend file), duplicates allowed, so
 * the providers of "potrs" are the duplicates of key "potrs".  Readers
 * (every solve) walk the duplicates under rcu_read_lock() and take a
 * reference on the chosen provider; they never lock.  Writers (first use of
 * a routine, rescan) serialize on one mutex.
 *
 * Why urcu-bp: the threads that call muster_solve belong to the host
 * framework (JAX's, TensorFlow's, a Go runtime's); we cannot make them call
 * rcu_register_thread() before their first read nor unregister them before
 * they exit.  The "bulletproof" flavour registers a reader lazily on its
 * first rcu_read_lock() and reclaims the slot of an exited thread itself;
 * its read side costs a little more than memb's, which does not matter at
 * one lookup per solve.
 *
 * Lifetime: a provider (one loaded file) has a reference count: one per
 * table node that points to it plus one per call running it.  A rescan that
 * replaces or removes a file deletes its nodes, waits for a grace period
 * (synchronize_rcu: after it no reader can still take a new reference through
 * those nodes), then drops the nodes' references.  Whoever drops the last
 * reference (the rescan, or the last call still running it) runs fini and
 * dlclose()s it.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "cost.h"
#include "provider_abi.h"
#include "env.h"
#include "muster/parse.h"
#include "registry.h"

/* TSan cannot see the ordering urcu provides (uninstrumented library), so
 * tell it: a writer publishes after RELEASE(&publish) and readers ACQUIRE
 * before reading a node; readers RELEASE(&readers_done) when they unlock and
 * the writer ACQUIREs after synchronize_rcu before freeing nodes. */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define TSAN_ACQUIRE(a) __tsan_acquire(a)
#define TSAN_RELEASE(a) __tsan_release(a)
#else
#define TSAN_ACQUIRE(a) ((void)0)
#define TSAN_RELEASE(a) ((void)0)
#endif
static char tsan_publish __attribute__((unused)), tsan_readers_done __attribute__((unused));


/* routine ids are 1..MUSTER_ROUTINE_END-1 (muster/types.h) */
#define NROUTINES MUSTER_ROUTINE_END

typedef struct prov {
  muster__provider_t pub;       /* first: callers see this part          */
  _Atomic long refs;            /* nodes + calls                          */
  void *handle;                 /* dlopen handle; NULL when refused       */
  int fd;                       /* the file, open while loaded (see load) */
  char alias[64];               /* "/proc/self/fd/N" it was loaded as     */
  struct prov *live_next;       /* every provider not yet unloaded        */
  dev_t dev;                    /* identity of the file when loaded       */
  ino_t ino;
  struct timespec mtime;
  off_t size;
  muster_provider_v2_t view;    /* what pub.v points to                   */
  muster__cost_t *table;        /* what pub.cost points to                */
} prov_t;

typedef struct node {
  struct cds_lfht_node lfht;
  char routine[16];             /* key                                    */
  char backend[32];             /* <backend>.so in <dir>/<routine>/       */
  char *path;                   /* that file                              */
  struct stat st;               /* its identity when listed               */
  prov_t *prov;                 /* NULL until loaded (set once, atomic);
                                   holds one reference                    */
} node_t;

static prov_t *node_prov(const node_t *nd) { return __atomic_load_n(&nd->prov, __ATOMIC_ACQUIRE); }

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct cds_lfht *table;
/* recursive: a provider's probe/init runs under it and may fork (our
 * atfork prepare handler then takes it again in the same thread).
 * writer_depth: how many times its holder holds it (touched only by the
 * holder; the fork child handler needs it, see there). */
static pthread_mutex_t writer = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int writer_depth;
static _Atomic int scanned[NROUTINES];

static const char *routine_str(int r) { return muster_routine_str(r); }

/* strncpy that always terminates (and does not warn about truncation) */
static void copy_str(char *dst, size_t cap, const char *src) {
  size_t len = strnlen(src, cap - 1);
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static unsigned long hash_str(const char *s) {
  unsigned long h = 1469598103934665603ul; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ul;
  return h;
}

static int match_routine(struct cds_lfht_node *n, const void *key) {
  TSAN_ACQUIRE(&tsan_publish);
  node_t *nd = caa_container_of(n, node_t, lfht);
  return strcmp(nd->routine, (const char *)key) == 0;
}

static void writer_lock(void) {
  pthread_mutex_lock(&writer);
  writer_depth++;
}

static void writer_unlock(void) {
  writer_depth--;
  pthread_mutex_unlock(&writer);
}

/* fork: a child must not inherit our writer mutex locked by another thread,
 * nor urcu-bp's registry of the parent's threads (urcu-bp asks its users to
 * call these around fork). Order: ours, then urcu's; reverse after. */
static void atfork_prepare(void) { writer_lock(); }
static void atfork_parent(void) { writer_unlock(); }
/* The child's only thread is the one that forked and took writer in
 * prepare, but it has a new thread id, and a recursive mutex records its
 * owner's id: unlocking it here fails (EPERM) and leaves it held by a thread
 * that does not exist, so the child's first provider load waited forever (a
 * process that had used the registry, then forked ranks that load another
 * routine's provider).  So start the child on a fresh mutex, held by its
 * thread as deep as the forking thread held it before prepare. */
static void atfork_child(void) {
  int held = writer_depth - 1;
  /* End prepare's hold first all the same: glibc refuses it (EPERM, the
   * new id), but a lock checker (TSan) that saw prepare take it records
   * the release and does not see the child hold it for ever */
  (void)pthread_mutex_unlock(&writer);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&writer, &attr);
  pthread_mutexattr_destroy(&attr);
  writer_depth = 0;
  for (int k = 0; k < held; k++) writer_lock();
}

static void init_once(void) {
  table = cds_lfht_new(8, 8, 0, 0, NULL);
  pthread_atfork(urcu_bp_before_fork, urcu_bp_after_fork_parent, urcu_bp_after_fork_child);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static int ensure_table(void) {
  pthread_once(&once, init_once);
  if (!table) return muster__err(MUSTER_ENOMEM, "provider registry: cannot create the hash table");
  return 0;
}

/* ---- provider files --------------------------------------------------- */

static prov_t *live_head; /* writer mutex */

/* Close the fd a provider was loaded through, unless ld.so still has an
 * object by that alias name (an object marked NODELETE, or shared with
 * another load): closing would let a later file get the same fd number and
 * hence the same name, and ld.so would hand back the old object.  Such an
 * fd is kept for the life of the process. */
static void release_fd(prov_t *p) {
  if (p->fd < 0) return;
  if (p->alias[0]) {
    void *still = dlopen(p->alias, RTLD_NOW | RTLD_NOLOAD);
    if (still) {
      dlclose(still);
      p->fd = -1;
      return;
    }
  }
  close(p->fd);
  p->fd = -1;
}

static void prov_unload(prov_t *p) {
  if (p->handle) {
    /* release_comms(0) first: fini may not expect communicators left */
    if (p->pub.v->release_comms) p->pub.v->release_comms(p->pub.ctx, 0);
    if (p->pub.v->fini) p->pub.v->fini(p->pub.ctx);
    muster__log(MUSTER_LOG_DEBUG, "provider %s: unloading %s", p->pub.name, p->pub.path);
    dlclose(p->handle);
  }
  release_fd(p);
  muster__cost_free(p->table);
  free(p);
}

void muster__provider_ref(muster__provider_t *pp) {
  prov_t *p = (prov_t *)pp;
  atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
}

void muster__provider_release(muster__provider_t *pp) {
  prov_t *p = (prov_t *)pp;
  if (!p) return;
  if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
  /* last reference: nobody can take a new one (lookups only reach providers
   * in the table, which hold a reference; find_live skips a zero count) */
  writer_lock();
  for (prov_t **pp2 = &live_head; *pp2; pp2 = &(*pp2)->live_next)
    if (*pp2 == p) {
      *pp2 = p->live_next;
      break;
    }
  /* under the lock too: every dlopen/dlclose of the registry is then
   * serialized by a lock TSan can see (ld.so's own lock it cannot) */
  prov_unload(p);
  writer_unlock();
}

/* The provider's cost table (cost.h): looked for once, at load, in
 * $MUSTER_COST_PATH, then in the path folder the file was listed in (the
 * parent of <dir>/<routine>/), then beside the real file. */
static void load_cost(prov_t *p, const char *listed) {
  char dir[PATH_MAX], file[PATH_MAX + 64];
  snprintf(dir, sizeof dir, "%s", listed);
  for (int up = 0; up < 2; up++) { /* <dir>/<routine>/<backend>.so -> <dir> */
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
  }
  if (!muster__cost_find(p->pub.name, dir, p->pub.path, file, sizeof file)) {
    snprintf(p->pub.cost_why, sizeof p->pub.cost_why, "no %s.cost found", p->pub.name);
    return;
  }
  char why[256];
  if (muster__cost_read(file, &p->table, why, sizeof why) < 0) {
    snprintf(p->pub.cost_why, sizeof p->pub.cost_why, "cost table refused: %.230s", why);
    muster__log(MUSTER_LOG_WARN, "provider %s: %s", p->pub.name, p->pub.cost_why);
    return;
  }
  p->pub.cost = p->table;
  snprintf(p->pub.cost_why, sizeof p->pub.cost_why, "%.250s", file);
}

/* Load one file. Never fails as a whole: a refused file gives a prov with
 * handle NULL and `why`, so listings and errors can show it. */
static prov_t *prov_load(const char *path, const char *backend, const struct stat *st) {
  prov_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->refs, 1); /* the caller's */
  p->fd = -1;
  p->dev = st->st_dev;
  p->ino = st->st_ino;
  p->mtime = st->st_mtim;
  p->size = st->st_size;
  copy_str(p->pub.name, sizeof p->pub.name, backend);
  if (!realpath(path, p->pub.path)) copy_str(p->pub.path, sizeof p->pub.path, path);
  /* ld.so hands back an already loaded object whose NAME matches, so
   * dlopen()ing the path again after the file behind it was replaced would
   * give the old code.  Load through /proc/self/fd/N of an fd kept open
   * while the provider is loaded: no loaded object can have that name, and
   * ld.so still shares an object whose inode is the same. */
  const char *load = p->pub.path;
  p->fd = open(p->pub.path, O_RDONLY | O_CLOEXEC);
  struct stat now;
  if (p->fd >= 0 && fstat(p->fd, &now) == 0) { /* the file we load, if it changed since the listing */
    p->dev = now.st_dev;
    p->ino = now.st_ino;
    p->mtime = now.st_mtim;
    p->size = now.st_size;
  }
  if (p->fd >= 0) {
    snprintf(p->alias, sizeof p->alias, "/proc/self/fd/%d", p->fd);
    if (access(p->alias, R_OK) == 0) load = p->alias;
    else p->alias[0] = '\0';
  }
  void *h = dlopen(load, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(p->pub.why, sizeof p->pub.why, "dlopen of %.200s failed: %s", p->pub.path,
             e ? e : "unknown error");
    goto refused;
  }
  if (muster__abi_resolve(h, backend, &p->view, &p->pub.abi, p->pub.why, sizeof p->pub.why) < 0) {
    dlclose(h);
    goto refused;
  }
  const muster_provider_v2_t *v = &p->view;
  char err[256] = "";
  if (v->init && v->init(&p->pub.ctx, err, sizeof err) < 0) {
    snprintf(p->pub.why, sizeof p->pub.why, "init failed: %s", err);
    dlclose(h); /* fini must not run */
    goto refused;
  }
  p->handle = h;
  p->pub.v = v;
  p->pub.available = 1;
  if (v->probe && v->probe(err, sizeof err) < 0) {
    p->pub.available = 0;
    snprintf(p->pub.why, sizeof p->pub.why, "probe: %s", err);
  }
  load_cost(p, path);
  muster__log(MUSTER_LOG_INFO, "provider %s (ABI v%u, %s) loaded from %s (%s; cost table: %s)",
              backend, p->pub.abi, v->kind == MUSTER_PROVIDER_COLLECTIVE ? "collective" : "leader",
              p->pub.path, p->pub.available ? "available" : p->pub.why, p->pub.cost_why);
  p->live_next = live_head;
  live_head = p;
  return p;
refused:
  muster__log(MUSTER_LOG_WARN, "provider file %s refused: %s", path, p->pub.why);
  release_fd(p);
  p->live_next = live_head;
  live_head = p;
  return p;
}

/* ---- search path ------------------------------------------------------ */

#define MAX_DIRS MUSTER_MAX_PROVIDER_DIRS

static int add_dir(char dirs[][PATH_MAX], int n, const char *d) {
  char real[PATH_MAX];
  if (n >= MAX_DIRS || !realpath(d, real)) return n;
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) return n;
  for (int i = 0; i < n; i++)
    if (!strcmp(dirs[i], real)) return n;
  snprintf(dirs[n], PATH_MAX, "%s", real);
  return n + 1;
}

static int add_beside(char dirs[][PATH_MAX], int n, const char *file) {
  char d[PATH_MAX], cand[PATH_MAX + 64];
  snprintf(d, sizeof d, "%s", file);
  char *slash = strrchr(d, '/');
  if (!slash) return n;
  *slash = '\0';
  snprintf(cand, sizeof cand, "%s/muster/providers", d);
  n = add_dir(dirs, n, cand);
  snprintf(cand, sizeof cand, "%s/../lib/muster/providers", d);
  return add_dir(dirs, n, cand);
}

/* MUSTER_PROVIDER_PATH, else beside libmuster.so (dladdr on one of our
 * symbols; in a statically linked program that is the executable) and
 * beside the executable.  *n = the folders found; MUSTER_EINVAL when
 * MUSTER_PROVIDER_PATH is malformed (env.c). */
static int search_dirs(char dirs[][PATH_MAX], int *n) {
  const char *env;
  int rc = muster__env_provider_path(&env);
  *n = 0;
  if (rc < 0) return rc;
  if (env) {
    char *copy = strdup(env), *save = NULL;
    if (!copy) return muster__err(MUSTER_ENOMEM, "provider registry: out of memory");
    for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
      *n = add_dir(dirs, *n, t);
    free(copy);
    return MUSTER_OK;
  }
  Dl_info info;
  if (dladdr((void *)&muster_providers_rescan, &info) && info.dli_fname)
    *n = add_beside(dirs, *n, info.dli_fname);
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = '\0';
    *n = add_beside(dirs, *n, exe);
  }
  return MUSTER_OK;
}

/* ---- writer side (mutex held) ----------------------------------------- */

/* A provider of the same file and backend that is still loaded (in the
 * table for another routine, or replaced but still running a call), with a
 * new reference; NULL if none.  Sharing it matters beyond saving a load:
 * one file must be one provider, so that the ld.so object and the fd it
 * was loaded through live and die together. */
static prov_t *find_live(const struct stat *st, const char *backend) {
  for (prov_t *p = live_head; p; p = p->live_next) {
    if (strcmp(p->pub.name, backend) || p->dev != st->st_dev || p->ino != st->st_ino ||
        p->size != st->st_size || p->mtime.tv_sec != st->st_mtim.tv_sec ||
        p->mtime.tv_nsec != st->st_mtim.tv_nsec)
      continue;
    long r = atomic_load(&p->refs);
    while (r > 0 && !atomic_compare_exchange_weak(&p->refs, &r, r + 1)) {
    }
    if (r > 0) return p;
  }
  return NULL;
}

static node_t *find_node(const char *routine, const char *backend) {
  struct cds_lfht_iter it;
  node_t *nd, *found = NULL;
  rcu_read_lock();
  cds_lfht_for_each_entry_duplicate(table, hash_str(routine), match_routine, routine, &it, nd, lfht) {
    if (!strcmp(nd->backend, backend)) {
      found = nd;
      break;
    }
  }
  TSAN_RELEASE(&tsan_readers_done);
  rcu_read_unlock();
  return found;
}

static int same_file(const struct stat *a, const struct stat *st) {
  return a->st_dev == st->st_dev && a->st_ino == st->st_ino && a->st_size == st->st_size &&
         a->st_mtim.tv_sec == st->st_mtim.tv_sec && a->st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

static int backend_of(const char *fname, char *out, size_t cap) {
  size_t len = strlen(fname);
  if (len < 4 || strcmp(fname + len - 3, ".so") != 0 || len - 3 >= cap) return 0;
  memcpy(out, fname, len - 3);
  out[len - 3] = '\0';
  return out[0] != '.';
}

struct found { char backend[32]; char path[PATH_MAX + 320]; struct stat st; };

/* The files of one routine, first folder on the path wins per backend. */
static int list_routine(char dirs[][PATH_MAX], int ndirs, const char *routine,
                        struct found *f, int cap) {
  int n = 0;
  for (int d = 0; d < ndirs; d++) {
    char sub[PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s/%s", dirs[d], routine);
    DIR *dir = opendir(sub);
    if (!dir) continue;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && n < cap) {
      char backend[32];
      if (!backend_of(e->d_name, backend, sizeof backend)) continue;
      int dup = 0;
      for (int i = 0; i < n; i++) dup |= !strcmp(f[i].backend, backend);
      if (dup) continue;
      snprintf(f[n].path, sizeof f[n].path, "%s/%s", sub, e->d_name);
      if (stat(f[n].path, &f[n].st) != 0) continue; /* dangling link */
      copy_str(f[n].backend, sizeof f[n].backend, backend);
      n++;
    }
    closedir(dir);
  }
  return n;
}

#define MAX_FILES 64

/* Bring the nodes of `routine` in line with the files on the path.  A
 * changed file's new node is added before the old one is deleted, so a
 * concurrent lookup always finds one of the two.  Deleted nodes go to
 * dead[]; the caller drops their references after a grace period. */
static void del_node(node_t *nd, node_t **dead, int *ndead, int deadcap) {
  if (*ndead < deadcap && cds_lfht_del(table, &nd->lfht) == 0) dead[(*ndead)++] = nd;
}

/* A table node for file f of `routine`, not yet in the table. */
static node_t *new_node(const char *routine, const struct found *f) {
  node_t *n = calloc(1, sizeof *n);
  char *path = strdup(f->path);
  if (!n || !path) {
    free(n);
    free(path);
    muster__err(MUSTER_ENOMEM, "provider registry: out of memory");
    return NULL;
  }
  snprintf(n->routine, sizeof n->routine, "%s", routine);
  snprintf(n->backend, sizeof n->backend, "%s", f->backend);
  n->path = path;
  n->st = f->st;
  /* not loaded yet (lazy), unless that very file is loaded already */
  n->prov = find_live(&f->st, f->backend);
  cds_lfht_node_init(&n->lfht);
  return n;
}

/* Put n in the table.  With `old` (the node of the same backend that n
 * supersedes) the two are swapped in one step (cds_lfht_replace): a reader
 * walking the routine's duplicates meanwhile sees exactly one of them.  An
 * add followed by a delete would let a reader that passed the insertion
 * point before the add reach the old node's place after the delete and
 * find neither: "no usable provider" during a rescan (seen once in CI,
 * registry_rescan_swap_under_load).  `old` then goes to dead[] (freed
 * after a grace period). */
static void publish_node(node_t *n, node_t *old, node_t **dead, int *ndead, int deadcap) {
  int replaced = 0;
  TSAN_RELEASE(&tsan_publish);
  rcu_read_lock();
  if (old && *ndead < deadcap) {
    struct cds_lfht_iter it;
    node_t *nd;
    cds_lfht_for_each_entry_duplicate(table, hash_str(n->routine), match_routine, n->routine, &it, nd, lfht) {
      if (nd != old) continue;
      if (cds_lfht_replace(table, &it, hash_str(n->routine), match_routine, n->routine, &n->lfht) == 0) {
        dead[(*ndead)++] = old;
        replaced = 1;
      }
      break;
    }
  }
  if (!replaced) {
    cds_lfht_add(table, hash_str(n->routine), &n->lfht);
    if (old) del_node(old, dead, ndead, deadcap);
  }
  rcu_read_unlock();
}

/* Load the not yet loaded providers of `routine` (only backend `only`
 * when given).  Writer mutex held.  Loading is where the cost is (a GPU
 * provider's dlopen pulls in its CUDA libraries: ~100 ms), so a forced
 * provider is the only one loaded. */
static void load_nodes(const char *routine, const char *only) {
  struct cds_lfht_iter it;
  node_t *nd;
  rcu_read_lock();
  cds_lfht_for_each_entry_duplicate(table, hash_str(routine), match_routine, routine, &it, nd, lfht) {
    if (node_prov(nd) || (only && only[0] && strcmp(nd->backend, only))) continue;
    prov_t *p = find_live(&nd->st, nd->backend);
    if (!p) p = prov_load(nd->path, nd->backend, &nd->st);
    if (p) __atomic_store_n(&nd->prov, p, __ATOMIC_RELEASE);
  }
  TSAN_RELEASE(&tsan_readers_done);
  rcu_read_unlock();
}

static void node_free(node_t *nd) {
  prov_t *p = node_prov(nd);
  if (p) muster__provider_release(&p->pub);
  free(nd->path);
  free(nd);
}

static int sync_routine(char dirs[][PATH_MAX], int ndirs, const char *routine,
                        node_t **dead, int *ndead, int deadcap) {
  struct found *files = malloc(MAX_FILES * sizeof *files); /* ~280 KB: not on a foreign stack */
  if (!files) return muster__err(MUSTER_ENOMEM, "provider registry: out of memory");
  int nf = list_routine(dirs, ndirs, routine, files, MAX_FILES);
  for (int i = 0; i < nf; i++) {
    node_t *have = find_node(routine, files[i].backend);
    if (have && same_file(&have->st, &files[i].st)) continue;
    node_t *n = new_node(routine, &files[i]);
    if (!n) {
      free(files);
      return MUSTER_ENOMEM;
    }
    publish_node(n, have, dead, ndead, deadcap);
  }
  /* files gone from the path */
  struct cds_lfht_iter it;
  node_t *nd;
  rcu_read_lock();
  cds_lfht_for_each_entry_duplicate(table, hash_str(routine), match_routine, routine, &it, nd, lfht) {
    int keep = 0;
    for (int i = 0; i < nf; i++) keep |= !strcmp(files[i].backend, nd->backend);
    if (!keep) del_node(nd, dead, ndead, deadcap);
  }
  TSAN_RELEASE(&tsan_readers_done);
  rcu_read_unlock();
  free(files);
  return 0;
}

/* Scan the given routines (ids); mutex held. */
static int sync_routines(const int *ids, int nids) {
  char (*dirs)[PATH_MAX] = calloc(MAX_DIRS, PATH_MAX);
  if (!dirs) return muster__err(MUSTER_ENOMEM, "provider registry: out of memory");
  node_t *dead[MAX_FILES * NROUTINES];
  int ndead = 0, ndirs = 0;
  int rc = search_dirs(dirs, &ndirs);
  for (int i = 0; i < nids && rc == 0; i++) {
    rc = sync_routine(dirs, ndirs, routine_str(ids[i]), dead, &ndead, MAX_FILES * NROUTINES);
    if (rc == 0) atomic_store(&scanned[ids[i]], 1);
  }
  if (ndead) {
    /* after this no reader can reach the dead nodes any more */
    synchronize_rcu();
    TSAN_ACQUIRE(&tsan_readers_done);
    for (int k = 0; k < ndead; k++) node_free(dead[k]);
  }
  free(dirs);
  return rc;
}

static int ensure_scanned(int r) {
  if (atomic_load_explicit(&scanned[r], memory_order_acquire)) return 0;
  writer_lock();
  int rc = atomic_load(&scanned[r]) ? 0 : sync_routines(&r, 1);
  writer_unlock();
  return rc;
}

int muster_providers_rescan(void) {
  int rc = ensure_table();
  if (rc < 0) return rc;
  int ids[NROUTINES], n = 0;
  writer_lock();
  /* routines never used stay lazy: their first use scans the path anyway */
  for (int r = 1; r < NROUTINES; r++)
    if (atomic_load(&scanned[r])) ids[n++] = r;
  rc = sync_routines(ids, n);
  writer_unlock();
  return rc;
}

/* ---- reader side ------------------------------------------------------- */

int muster_provider_forced(muster_routine_t routine, char *name, size_t cap) {
  const char *rname = routine_str(routine);
  if (!name || cap == 0 || !rname)
    return muster__err(MUSTER_EINVAL, "muster_provider_forced: %s", rname ? "no buffer" : "unknown routine");
  if (cap < MUSTER_MAX_BACKEND + 1)
    return muster__err(MUSTER_EINVAL, "muster_provider_forced: the buffer needs %d bytes", MUSTER_MAX_BACKEND + 1);
  return muster__env_provider_choice(rname, name, cap);
}

/* Take a reference on every loaded provider of `rname` (backend `only`
 * when given) into out; *unloaded set when some node is not loaded yet. */
static int collect_loaded(const char *rname, const char *only, muster__provider_t **out, int cap,
                          int *unloaded) {
  struct cds_lfht_iter it;
  node_t *nd;
  int n = 0;
  *unloaded = 0;
  rcu_read_lock();
  cds_lfht_for_each_entry_duplicate(table, hash_str(rname), match_routine, rname, &it, nd, lfht) {
    if (only && only[0] && strcmp(nd->backend, only) != 0) continue;
    prov_t *p = node_prov(nd);
    if (!p) { /* first use of this file: load it (slow path, below) */
      *unloaded = 1;
      continue;
    }
    int dup = 0;
    for (int k = 0; k < n; k++) dup |= out[k] == &p->pub;
    if (dup || n == cap) continue;
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    out[n++] = &p->pub;
  }
  TSAN_RELEASE(&tsan_readers_done);
  rcu_read_unlock();
  return n;
}

int muster__provider_collect(muster_routine_t routine, const char *only, muster__provider_t **out,
                             int cap) {
  const char *rname = routine_str(routine);
  if (!rname) return muster__err(MUSTER_EINVAL, "unknown routine %d", (int)routine);
  int rc = ensure_table();
  if (rc < 0) return rc;
  if ((rc = ensure_scanned(routine)) < 0) return rc;
  int unloaded = 0;
  int n = collect_loaded(rname, only, out, cap, &unloaded);
  if (!unloaded) return n;
  /* Load, then collect again with the writer mutex still held: a rescan
   * (which holds it) cannot put a fresh, unloaded node in between, as it
   * could between unlocked retries (a caller then found "no usable
   * provider" with nothing to say why while another thread swapped files). */
  for (int k = 0; k < n; k++) muster__provider_release(out[k]);
  writer_lock();
  load_nodes(rname, only);
  n = collect_loaded(rname, only, out, cap, &unloaded);
  writer_unlock();
  if (unloaded) { /* prov_load could not even record a failure */
    for (int k = 0; k < n; k++) muster__provider_release(out[k]);
    return muster__err(MUSTER_ENOMEM, "provider registry: could not load the providers of %s "
                       "(out of memory?)", rname);
  }
  return n;
}

/* ---- listing ------------------------------------------------------------ */

int muster_providers_list(muster_provider_info_t *out, int cap) {
  if (cap < 0 || (cap > 0 && !out)) return muster__err(MUSTER_EINVAL, "muster_providers_list: bad buffer");
  int rc = muster__env_check_log();
  if (rc < 0) return rc;
  rc = ensure_table();
  if (rc < 0) return rc;
  for (int r = 1; r < NROUTINES; r++)
    if ((rc = ensure_scanned(r)) < 0) return rc;
  /* one entry per distinct file; listing holds the writer lock so the set
   * is stable (a listing is rare). */
  writer_lock();
  for (int r = 1; r < NROUTINES; r++) load_nodes(routine_str(r), NULL);
  const prov_t *seen[MAX_FILES * NROUTINES];
  int n = 0;
  struct cds_lfht_iter it;
  node_t *nd;
  rcu_read_lock();
  cds_lfht_for_each_entry(table, &it, nd, lfht) {
    prov_t *p = node_prov(nd);
    if (!p) continue; /* out of memory while loading */
    int k;
    for (k = 0; k < n; k++)
      if (seen[k] == p) break;
    if (k == n) {
      if (n == MAX_FILES * NROUTINES) continue;
      seen[n++] = p;
      if (k < cap) {
        muster_provider_info_t *i = &out[k];
        memset(i, 0, sizeof *i);
        snprintf(i->name, sizeof i->name, "%s", p->pub.name);
        snprintf(i->path, sizeof i->path, "%s", p->pub.path);
        if (p->pub.v) {
          i->routines = p->pub.v->routines;
          i->dtypes = p->pub.v->dtypes;
          i->mem_kinds = p->pub.v->mem_kinds;
          i->priority = p->pub.v->priority;
        }
        i->available = p->pub.available;
        snprintf(i->why, sizeof i->why, "%s", p->pub.why);
        if (p->pub.v) {
          i->abi = p->pub.abi;
          i->kind = p->pub.v->kind;
          i->spans = p->pub.v->spans;
          snprintf(i->cost, sizeof i->cost, "%s", p->pub.cost_why);
        }
      }
    }
    /* a refused file: say which routine folders named it */
    for (int r = 1; r < NROUTINES && k < cap; r++)
      if (!p->pub.v && !strcmp(nd->routine, routine_str(r))) out[k].routines |= 1u << r;
  }
  TSAN_RELEASE(&tsan_readers_done);
  rcu_read_unlock();
  writer_unlock();
  return n;
}
