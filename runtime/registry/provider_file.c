/*
 * runtime/registry/provider_file.c - one provider file: load (dlopen through a kept
 * fd, ABI table, init, probe, cost table), share, reference-count, unload.
 * See provider_file.h; the table of routines that points to these is
 * runtime/registry/registry.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/exit_guard.h"
#include "registry/provider_abi.h"
#include "registry/provider_file.h"

static muster__prov_t *live_head; /* writer mutex */

/* Close the fd a provider was loaded through, unless ld.so still has an
 * object by that alias name (an object marked NODELETE, or shared with
 * another load): closing would let a later file get the same fd number and
 * hence the same name, and ld.so would hand back the old object.  Such an
 * fd is kept for the life of the process. */
static void release_fd(muster__prov_t *p) {
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

static void prov_unload(muster__prov_t *p) {
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
  muster__prov_t *p = (muster__prov_t *)pp;
  atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
}

void muster__provider_release(muster__provider_t *pp) {
  muster__prov_t *p = (muster__prov_t *)pp;
  if (!p) return;
  if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
  /* last reference: nobody can take a new one (lookups only reach providers
   * in the table, which hold a reference; muster__prov_find_live skips a zero count) */
  muster__provider_lock();
  for (muster__prov_t **pp2 = &live_head; *pp2; pp2 = &(*pp2)->live_next)
    if (*pp2 == p) {
      *pp2 = p->live_next;
      break;
    }
  /* under the lock too: every dlopen/dlclose of the registry is then
   * serialized by a lock TSan can see (ld.so's own lock it cannot) */
  prov_unload(p);
  muster__provider_unlock();
}

/* The provider's cost table (cost.h): looked for once, at load, in
 * $MUSTER_COST_PATH, then in the path folder the file was listed in (the
 * parent of <dir>/<routine>/), then beside the real file. */
static void load_cost(muster__prov_t *p, const char *listed) {
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
  if (p->table->unmeasured) { /* read, but no measurement to choose by: no table, and why */
    const char *base = strrchr(file, '/');
    snprintf(p->pub.cost_why, sizeof p->pub.cost_why, "no cost table (%.60s is unmeasured: %.150s)",
             base ? base + 1 : file, p->table->unmeasured_why);
    muster__cost_free(p->table);
    p->table = NULL;
    return;
  }
  p->pub.cost = p->table;
  snprintf(p->pub.cost_why, sizeof p->pub.cost_why, "%.250s", file);
}

/* What a file that is not a regular file is, for a refusal. */
static const char *file_kind(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a folder";
  return "not a file";
}

/* Open the provider file without ever blocking or touching a device: only
 * a regular file is loaded.  Opening a FIFO for reading waits for a writer
 * (every registry scan, hence every solve and `muster providers`, hung on a
 * FIFO in a provider folder), and opening a device can do things (a tape
 * rewinds, a tty becomes ours).  listed: its identity when the folder was
 * listed (stat, through links); a file swapped for something else since
 * is caught by the fstat of what was opened: O_NONBLOCK makes that open of
 * a FIFO return at once.  0 with p->fd, or -1 with p->pub.why. */
static int open_regular(muster__prov_t *p, const struct stat *listed) {
  if (!S_ISREG(listed->st_mode)) {
    snprintf(p->pub.why, sizeof p->pub.why, "%.200s is not a regular file (%s)", p->pub.path,
             file_kind(listed->st_mode));
    return -1;
  }
  p->fd = open(p->pub.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat now;
  if (p->fd < 0 || fstat(p->fd, &now) != 0) {
    snprintf(p->pub.why, sizeof p->pub.why, "cannot open %.200s: %s", p->pub.path, strerror(errno));
    return -1;
  }
  if (!S_ISREG(now.st_mode)) {
    snprintf(p->pub.why, sizeof p->pub.why, "%.200s is not a regular file (%s)", p->pub.path,
             file_kind(now.st_mode));
    return -1;
  }
  p->dev = now.st_dev; /* the file we load, if it changed since the listing */
  p->ino = now.st_ino;
  p->mtime = now.st_mtim;
  p->size = now.st_size;
  return 0;
}

/* dlopen the file p->fd holds.  By its real path when ld.so has no object
 * of that name: $ORIGIN in the provider's RPATH is then its folder (a
 * wheel's providers find the libraries `auditwheel repair` bundled
 * through it, <site-packages>/muster_runtime.libs; loaded as
 * /proc/self/fd/N, $ORIGIN is /proc/self/fd and they are not found).  But
 * ld.so hands back an already loaded object whose NAME matches, so when
 * one has that name (an older version of a replaced file, still running a
 * call or kept NODELETE), or the file ld.so opened by name is not the one
 * we hold (replaced meanwhile), load through /proc/self/fd/N of the kept
 * fd: no loaded object can have that name, and ld.so still shares an
 * object whose inode is the same.  NULL with dlerror() set on failure. */
static void *open_object(muster__prov_t *p) {
  void *h = dlopen(p->pub.path, RTLD_NOW | RTLD_NOLOAD);
  if (h) {
    dlclose(h);
  } else {
    (void)dlerror();
    h = dlopen(p->pub.path, RTLD_NOW | RTLD_LOCAL);
    struct stat now;
    if (!h) return NULL;
    if (stat(p->pub.path, &now) == 0 && now.st_dev == p->dev && now.st_ino == p->ino) return h;
    dlclose(h);
  }
  const char *load = p->pub.path;
  snprintf(p->alias, sizeof p->alias, "/proc/self/fd/%d", p->fd);
  if (access(p->alias, R_OK) == 0) load = p->alias;
  else p->alias[0] = '\0'; /* no /proc: by name (checked regular just now) */
  return dlopen(load, RTLD_NOW | RTLD_LOCAL);
}

/* Load one file. Never fails as a whole: a refused file gives a prov with
 * handle NULL and `why`, so listings and errors can show it. */
muster__prov_t *muster__prov_load(const char *path, const char *backend, const struct stat *st,
                                  const char *id) {
  muster__prov_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->refs, 1); /* the caller's */
  p->fd = -1;
  p->dev = st->st_dev;
  p->ino = st->st_ino;
  p->mtime = st->st_mtim;
  p->size = st->st_size;
  snprintf(p->id, sizeof p->id, "%s", id);
  snprintf(p->pub.name, sizeof p->pub.name, "%s", backend);
  if (!realpath(path, p->pub.path)) snprintf(p->pub.path, sizeof p->pub.path, "%s", path);
  if (open_regular(p, st) < 0) goto refused;
  void *h = open_object(p);
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
  /* the engine's version for its cost table (optional: provider.h) */
  p->pub.engine_version = (muster_provider_engine_version_fn)dlsym(h, MUSTER_PROVIDER_SYMBOL_ENGINE_VERSION);
  p->pub.available = 1;
  err[0] = '\0';
  if (v->probe && v->probe(err, sizeof err) < 0) {
    p->pub.available = 0;
    snprintf(p->pub.why, sizeof p->pub.why, "probe: %s", err);
  } else if (memchr(err, '\0', sizeof err)) { /* a usable provider's note: what it runs with */
    snprintf(p->pub.why, sizeof p->pub.why, "%s", err);
  }
  load_cost(p, path);
  /* its libraries registered their exit handlers (C++ destructors, CUDA's
   * teardown) as they loaded: ours must run before them (exit_guard.h) */
  muster__exit_guard_arm();
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

muster__prov_t *muster__prov_stub(const char *path, const char *backend, const char *why) {
  muster__prov_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->refs, 1);
  p->fd = -1;
  snprintf(p->pub.name, sizeof p->pub.name, "%s", backend);
  if (!realpath(path, p->pub.path)) snprintf(p->pub.path, sizeof p->pub.path, "%s", path);
  snprintf(p->pub.why, sizeof p->pub.why, "%s", why);
  return p;
}

/* The same file as *st, or a copy of it (the same id) */
static int same_file(const muster__prov_t *p, const struct stat *st, const char *id) {
  if (id[0] && !strcmp(p->id, id)) return 1;
  return p->dev == st->st_dev && p->ino == st->st_ino && p->size == st->st_size &&
         p->mtime.tv_sec == st->st_mtim.tv_sec && p->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* A provider of the same file (or a copy: the same id) and backend that is
 * still loaded (in the table for another routine, or replaced but still
 * running a call), with a new reference; NULL if none.  Sharing it matters
 * beyond saving a load: one file must be one provider, so that the ld.so
 * object and the fd it was loaded through live and die together, and a
 * copy of a file must not be a second instance of it (ld.so loads two
 * inodes twice: two CUDA contexts, two caches of handles). */
muster__prov_t *muster__prov_find_live(const struct stat *st, const char *id, const char *backend) {
  for (muster__prov_t *p = live_head; p; p = p->live_next) {
    if (strcmp(p->pub.name, backend) || !same_file(p, st, id)) continue;
    long r = atomic_load(&p->refs);
    while (r > 0 && !atomic_compare_exchange_weak(&p->refs, &r, r + 1)) {
    }
    if (r > 0) return p;
  }
  return NULL;
}


const muster__prov_t *muster__prov_other_build(const struct stat *st, const char *id,
                                               const char *backend) {
  for (const muster__prov_t *p = live_head; p; p = p->live_next)
    if (p->handle && p->nodes > 0 && !strcmp(p->pub.name, backend) && !same_file(p, st, id)) return p;
  return NULL;
}
