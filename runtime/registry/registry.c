/*
 * runtime/registry/registry.c - the provider registry.
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
 *
 * The listing (muster_providers_list) is registry_list.c's; the node, the
 * table and the TSan annotations both files use are in registryInt.h.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "base/env.h"
#include "base/exit_guard.h"
#include "muster/parse.h"
#include "registry/provider_elf.h"
#include "registry/provider_file.h"
#include "registry/provider_path.h"
#include "registry/registry.h"
#include "registry/registryInt.h"

/* the TSan addresses (registryInt.h) */
char muster__registry_tsan_publish, muster__registry_tsan_readers_done;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct cds_lfht *table;
static _Atomic int scanned[NROUTINES];

static const char *routine_str(int r) { return muster_routine_str(r); }

static unsigned long hash_str(const char *s) {
  unsigned long h = 1469598103934665603ul; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ul;
  return h;
}

static int match_routine(struct cds_lfht_node *n, const void *key) {
  TSAN_ACQUIRE(&muster__registry_tsan_publish);
  node_t *nd = caa_container_of(n, node_t, lfht);
  return strcmp(nd->routine, (const char *)key) == 0;
}

static void init_once(void) {
  table = cds_lfht_new(8, 8, 0, 0, NULL);
  pthread_atfork(urcu_bp_before_fork, urcu_bp_after_fork_parent, urcu_bp_after_fork_child);
  muster__provider_lock_atfork();
}

static int ensure_table(void) {
  pthread_once(&once, init_once);
  if (!table) return muster__err(MUSTER_ENOMEM, "provider registry: cannot create the hash table");
  return 0;
}

int muster__registry_table(struct cds_lfht **out) {
  int rc = ensure_table();
  *out = table;
  return rc;
}

/* ---- writer side (mutex held) ----------------------------------------- */

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
  TSAN_RELEASE(&muster__registry_tsan_readers_done);
  rcu_read_unlock();
  return found;
}

/* Bring the nodes of `routine` in line with the files on the path.  A
 * changed file's new node is added before the old one is deleted, so a
 * concurrent lookup always finds one of the two.  Deleted nodes go to
 * dead[]; the caller drops their references after a grace period. */
static void del_node(node_t *nd, node_t **dead, int *ndead, int deadcap) {
  if (*ndead < deadcap && cds_lfht_del(table, &nd->lfht) == 0) dead[(*ndead)++] = nd;
}

/* The stand-in of a node whose file lacks a memory kind (registry.h):
 * "no host memory (cuda only, says its file; not loaded)". */
static void node_stub(node_t *n) {
  static const struct { int kind; const char *name; } kinds[] = {
      {MUSTER_MEM_HOST, "host"}, {MUSTER_MEM_CUDA, "cuda"}};
  char names[2][32] = {"", ""}, why[200]; /* [0]: kinds it lacks, [1]: kinds it takes */
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    char *into = names[(n->file_mem >> kinds[k].kind) & 1u];
    size_t len = strlen(into);
    snprintf(into + len, sizeof names[0] - len, "%s%s", len ? " or " : "", kinds[k].name);
  }
  if (!n->file_mem || !names[0][0]) return;
  snprintf(why, sizeof why, "no %s memory (%s only, says its file; not loaded)", names[0],
           names[1][0] ? names[1] : "other kinds");
  n->stub = muster__prov_stub(n->path, n->backend, why);
}

/* Not loaded for a call on memory kind mem (0: any): its file says it does
 * not take it. */
static int node_skips(const node_t *nd, int mem) {
  return mem && nd->stub && !(nd->file_mem & (1u << mem));
}

/* A table node for file f of `routine`, not yet in the table. */
static node_t *new_node(const char *routine, const muster__provider_found_t *f) {
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
  muster__provider_file_id(f->path, n->id, sizeof n->id);
  /* not loaded yet (lazy), unless that very file (or a copy) is loaded already */
  n->prov = muster__prov_find_live(&f->st, n->id, f->backend);
  if (n->prov) n->prov->nodes++;
  n->file_mem = muster__provider_file_mem(f->path);
  node_stub(n);
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
  TSAN_RELEASE(&muster__registry_tsan_publish);
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

/* Load nd's file, unless another build of its backend is loaded (provider_file.h:
 * muster__prov_other_build): then a stand-in that says so. */
static muster__prov_t *load_once(const node_t *nd) {
  const muster__prov_t *other = muster__prov_other_build(&nd->st, nd->id, nd->backend);
  if (!other) return muster__prov_load(nd->path, nd->backend, &nd->st, nd->id);
  char why[256];
  snprintf(why, sizeof why, "another build of %.31s is loaded, from %.160s: one instance per process",
           nd->backend, other->pub.path);
  muster__log(MUSTER_LOG_WARN, "provider file %s refused: %s", nd->path, why);
  return muster__prov_stub(nd->path, nd->backend, why);
}

/* Load (registryInt.h).  Loading is where the cost is (a GPU provider's
 * dlopen pulls in its CUDA libraries: ~100 ms, ~200 MB), so a forced
 * provider is the only one loaded, and one whose file says it takes only
 * device memory is not loaded for a call on host memory. */
void muster__registry_load(const char *routine, const char *only, int mem) {
  struct cds_lfht_iter it;
  node_t *nd;
  rcu_read_lock();
  cds_lfht_for_each_entry_duplicate(table, hash_str(routine), match_routine, routine, &it, nd, lfht) {
    if (node_prov(nd) || (only && only[0] && strcmp(nd->backend, only)) || node_skips(nd, mem))
      continue;
    muster__prov_t *p = muster__prov_find_live(&nd->st, nd->id, nd->backend);
    if (!p) p = load_once(nd);
    if (!p) continue;
    p->nodes++;
    __atomic_store_n(&nd->prov, p, __ATOMIC_RELEASE);
  }
  TSAN_RELEASE(&muster__registry_tsan_readers_done);
  rcu_read_unlock();
}

static void node_free(node_t *nd) {
  muster__prov_t *p = node_prov(nd);
  if (p) p->nodes--;
  if (p) muster__provider_release(&p->pub);
  if (nd->stub) muster__provider_release(&nd->stub->pub);
  free(nd->path);
  free(nd);
}

static int sync_routine(char dirs[][PATH_MAX], int ndirs, const char *routine,
                        node_t **dead, int *ndead, int deadcap) {
  muster__provider_found_t *files = malloc(MAX_FILES * sizeof *files); /* ~280 KB: not on a foreign stack */
  if (!files) return muster__err(MUSTER_ENOMEM, "provider registry: out of memory");
  int nf = muster__provider_files(dirs, ndirs, routine, files, MAX_FILES);
  for (int i = 0; i < nf; i++) {
    node_t *have = find_node(routine, files[i].backend);
    if (have && muster__provider_same_file(&have->st, &files[i].st)) continue;
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
  TSAN_RELEASE(&muster__registry_tsan_readers_done);
  rcu_read_unlock();
  free(files);
  return 0;
}

/* Scan the given routines (ids); mutex held. */
static int sync_routines(const int *ids, int nids) {
  char (*dirs)[PATH_MAX] = calloc(MUSTER_MAX_PROVIDER_DIRS, PATH_MAX);
  if (!dirs) return muster__err(MUSTER_ENOMEM, "provider registry: out of memory");
  node_t *dead[MAX_FILES * NROUTINES];
  int ndead = 0, ndirs = 0;
  int rc = muster__provider_search_dirs(dirs, &ndirs);
  for (int i = 0; i < nids && rc == 0; i++) {
    rc = sync_routine(dirs, ndirs, routine_str(ids[i]), dead, &ndead, MAX_FILES * NROUTINES);
    if (rc == 0) atomic_store(&scanned[ids[i]], 1);
  }
  if (ndead) {
    /* after this no reader can reach the dead nodes any more */
    synchronize_rcu();
    TSAN_ACQUIRE(&muster__registry_tsan_readers_done);
    for (int k = 0; k < ndead; k++) node_free(dead[k]);
  }
  free(dirs);
  return rc;
}

int muster__registry_scan(int r) {
  if (atomic_load_explicit(&scanned[r], memory_order_acquire)) return 0;
  muster__provider_lock();
  int rc = atomic_load(&scanned[r]) ? 0 : sync_routines(&r, 1);
  muster__provider_unlock();
  return rc;
}

/* Rescans begun: a comm's kept choice is asked again after one (comm_plan.h). */
static atomic_uint rescans;

unsigned muster__providers_rescans(void) { return atomic_load(&rescans); }

static int providers_rescan_call(void) {
  atomic_fetch_add(&rescans, 1);
  int rc = ensure_table();
  if (rc < 0) return rc;
  int ids[NROUTINES], n = 0;
  muster__provider_lock();
  /* routines never used stay lazy: their first use scans the path anyway */
  for (int r = 1; r < NROUTINES; r++)
    if (atomic_load(&scanned[r])) ids[n++] = r;
  rc = sync_routines(ids, n);
  muster__provider_unlock();
  return rc;
}

/* ---- release (muster_providers_release) -------------------------------- */

/* A node for nd's file, not loaded: the same identity as nd (a release is
 * no rescan: the files are not read again), its stand-in shared. */
static node_t *unloaded_copy(const node_t *nd) {
  node_t *n = calloc(1, sizeof *n);
  char *path = strdup(nd->path);
  if (!n || !path) {
    free(n);
    free(path);
    return NULL;
  }
  memcpy(n->routine, nd->routine, sizeof n->routine);
  memcpy(n->backend, nd->backend, sizeof n->backend);
  memcpy(n->id, nd->id, sizeof n->id);
  n->path = path;
  n->st = nd->st;
  n->file_mem = nd->file_mem;
  n->stub = nd->stub;
  if (n->stub) muster__provider_ref(&n->stub->pub);
  cds_lfht_node_init(&n->lfht);
  return n;
}

/* Swap every loaded node for an unloaded copy, as a rescan swaps a changed
 * file's (publish_node: a lookup meanwhile finds one of the two), then
 * drop the old nodes' references after a grace period: a provider no call
 * holds is unloaded here, one a call holds when that call drops it. */
int muster__providers_unload_all(void) {
  int rc = ensure_table();
  if (rc < 0) return rc;
  enum { CAP = MAX_FILES * NROUTINES };
  node_t **loaded = malloc(2 * CAP * sizeof *loaded), **dead = loaded + CAP; /* not on a foreign stack */
  if (!loaded) return muster__err(MUSTER_ENOMEM, "muster_providers_release: out of memory");
  int nloaded = 0, ndead = 0;
  struct cds_lfht_iter it;
  node_t *nd;
  muster__provider_lock();
  rcu_read_lock(); /* collected first: the table is not walked while it changes */
  cds_lfht_for_each_entry(table, &it, nd, lfht) if (node_prov(nd) && nloaded < CAP) loaded[nloaded++] = nd;
  TSAN_RELEASE(&muster__registry_tsan_readers_done);
  rcu_read_unlock();
  for (int k = 0; k < nloaded && rc == 0; k++) {
    node_t *n = unloaded_copy(loaded[k]);
    if (n) publish_node(n, loaded[k], dead, &ndead, CAP);
    else rc = muster__err(MUSTER_ENOMEM, "muster_providers_release: out of memory");
  }
  if (ndead) {
    synchronize_rcu();
    TSAN_ACQUIRE(&muster__registry_tsan_readers_done);
    for (int k = 0; k < ndead; k++) node_free(dead[k]);
  }
  muster__provider_unlock();
  free(loaded);
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
 * when given) into out, or on its stand-in when it is not loaded and does
 * not take memory kind mem; *unloaded set when some node is not loaded
 * yet. */
static int collect_loaded(const char *rname, const char *only, int mem, muster__provider_t **out,
                          int cap, int *unloaded) {
  struct cds_lfht_iter it;
  node_t *nd;
  int n = 0;
  *unloaded = 0;
  rcu_read_lock();
  cds_lfht_for_each_entry_duplicate(table, hash_str(rname), match_routine, rname, &it, nd, lfht) {
    if (only && only[0] && strcmp(nd->backend, only) != 0) continue;
    muster__prov_t *p = node_prov(nd);
    if (!p && node_skips(nd, mem)) p = nd->stub;
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
  TSAN_RELEASE(&muster__registry_tsan_readers_done);
  rcu_read_unlock();
  return n;
}

int muster__provider_collect(muster_routine_t routine, const char *only, int mem,
                             muster__provider_t **out, int cap) {
  const char *rname = routine_str(routine);
  if (!rname) return muster__err(MUSTER_EINVAL, "unknown routine %d", (int)routine);
  const char *cost_path;
  int rc = muster__env_cost_path(&cost_path); /* read when a provider loads: never skipped */
  if (rc < 0) return rc;
  if ((rc = ensure_table()) < 0) return rc;
  if ((rc = muster__registry_scan(routine)) < 0) return rc;
  int unloaded = 0;
  int n = collect_loaded(rname, only, mem, out, cap, &unloaded);
  if (!unloaded) return n;
  /* Load, then collect again with the writer mutex still held: a rescan
   * (which holds it) cannot put a fresh, unloaded node in between, as it
   * could between unlocked retries (a caller then found "no usable
   * provider" with nothing to say why while another thread swapped files). */
  for (int k = 0; k < n; k++) muster__provider_release(out[k]);
  muster__provider_lock();
  muster__registry_load(rname, only, mem);
  n = collect_loaded(rname, only, mem, out, cap, &unloaded);
  muster__provider_unlock();
  if (unloaded) { /* prov_load could not even record a failure */
    for (int k = 0; k < n; k++) muster__provider_release(out[k]);
    return muster__err(MUSTER_ENOMEM, "provider registry: could not load the providers of %s "
                       "(out of memory?)", rname);
  }
  return n;
}

/* muster_providers_rescan with exit() safe meanwhile (exit_guard.h) */
int muster_providers_rescan(void) {
  int rc = muster__exit_guard_enter("muster_providers_rescan");
  if (rc < 0) return rc;
  rc = providers_rescan_call();
  muster__exit_guard_leave();
  return rc;
}
