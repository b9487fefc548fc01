/*
 * runtime/base/devices.c - muster_run_on_devices: one thread per device, with the
 * device current for the whole thread (ICICLE's RunOnDevice for Go, one task
 * per device in CUDA.jl).
 *
 * Every thread first makes its device current; only when all of them
 * succeeded does any thread call fn (otherwise ranks that did start would
 * wait in a group for a rank that never comes, until the timeout).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/devices.h"

typedef int (*set_device_fn)(int);
typedef int (*get_device_fn)(int *);
typedef int (*mem_info_fn)(size_t *, size_t *);
typedef int (*bus_id_fn)(char *, int, int);
typedef const char *(*error_name_fn)(int);

static pthread_once_t cudart_once = PTHREAD_ONCE_INIT;
static set_device_fn cudart_set_device;
static get_device_fn cudart_get_device;
static mem_info_fn cudart_mem_info;
static bus_id_fn cudart_bus_id;
static error_name_fn cudart_error_name;
static char cudart_why[256];
static void *cudart_handle;

static void cudart_load(void) {
  static const char *names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
  void *h = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++) {
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h && i == 0) snprintf(cudart_why, sizeof cudart_why, "%s", dlerror());
  }
  if (!h) return;
  cudart_handle = h;
  cudart_set_device = (set_device_fn)dlsym(h, "cudaSetDevice");
  cudart_error_name = (error_name_fn)dlsym(h, "cudaGetErrorName");
  cudart_get_device = (get_device_fn)dlsym(h, "cudaGetDevice");
  cudart_mem_info = (mem_info_fn)dlsym(h, "cudaMemGetInfo");
  cudart_bus_id = (bus_id_fn)dlsym(h, "cudaDeviceGetPCIBusId");
  if (!cudart_set_device) snprintf(cudart_why, sizeof cudart_why, "libcudart has no cudaSetDevice");
  /* the handle stays open for the life of the process, like the CUDA runtime */
}

void *muster__cudart(const char **why) {
  pthread_once(&cudart_once, cudart_load);
  if (why) *why = cudart_why[0] ? cudart_why : "not found";
  return cudart_set_device ? cudart_handle : NULL;
}

const char *muster__cuda_error_name(int st) {
  pthread_once(&cudart_once, cudart_load);
  return cudart_error_name ? cudart_error_name(st) : "cudaError";
}

int muster__cuda_set_device(int device) {
  if (device < 0) return 0;
  pthread_once(&cudart_once, cudart_load);
  if (!cudart_set_device)
    return muster__err(MUSTER_ECUDA, "device %d: cannot load the CUDA runtime (libcudart): %s", device,
                       cudart_why[0] ? cudart_why : "not found");
  int st = cudart_set_device(device);
  if (st != 0)
    return muster__err(MUSTER_ECUDA, "device %d: cudaSetDevice(%d) failed: %s (%d)", device, device,
                       cudart_error_name ? cudart_error_name(st) : "cudaError", st);
  return 0;
}

void muster__cuda_device_facts(int device, uint64_t *free_b, uint64_t *total_b, char *busid,
                               size_t cap) {
  *free_b = *total_b = 0;
  if (cap) busid[0] = '\0';
  if (device < 0) return;
  pthread_once(&cudart_once, cudart_load);
  if (cudart_bus_id && cap && cudart_bus_id(busid, (int)cap, device) != 0) busid[0] = '\0';
  if (!cudart_mem_info || !cudart_set_device || !cudart_get_device) return;
  /* cudaMemGetInfo speaks of the current device: make `device` current for
   * the query only, then give the caller's thread its own back */
  int was = -1;
  if (cudart_get_device(&was) != 0) return;
  if (was != device && cudart_set_device(device) != 0) return;
  size_t f = 0, t = 0;
  if (cudart_mem_info(&f, &t) == 0) {
    *free_b = f;
    *total_b = t;
  }
  if (was != device) cudart_set_device(was);
}

/* A gate every thread passes once all have arrived; unlike a
 * pthread_barrier, the starter can lower the count when it could not create
 * every thread, so the ones already running never wait forever. */
typedef struct run_shared {
  muster_device_fn fn;
  void *arg;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int arrived, expected;
  int failed; /* some thread could not make its device current */
} run_shared_t;

static void gate_wait(run_shared_t *sh, int failed) {
  pthread_mutex_lock(&sh->mu);
  if (failed) sh->failed = 1;
  sh->arrived++;
  if (sh->arrived >= sh->expected) pthread_cond_broadcast(&sh->cv);
  while (sh->arrived < sh->expected) pthread_cond_wait(&sh->cv, &sh->mu);
  pthread_mutex_unlock(&sh->mu);
}

typedef struct run_thread {
  run_shared_t *sh;
  int rank, device;
  int rc;
  char msg[512];
  pthread_t tid;
} run_thread_t;

static void *run_one(void *p) {
  run_thread_t *t = p;
  t->rc = muster__cuda_set_device(t->device);
  if (t->rc < 0) snprintf(t->msg, sizeof t->msg, "%s", muster_last_error());
  gate_wait(t->sh, t->rc < 0);
  pthread_mutex_lock(&t->sh->mu);
  int failed = t->sh->failed;
  pthread_mutex_unlock(&t->sh->mu);
  if (t->rc < 0 || failed) return NULL;
  muster__err_clear();
  t->rc = t->sh->fn(t->rank, t->device, t->sh->arg);
  if (t->rc != 0) snprintf(t->msg, sizeof t->msg, "%s", muster_last_error());
  return NULL;
}

int muster_run_on_devices(int ndevices, const int *devices, muster_device_fn fn, void *arg) {
  if (ndevices < 1 || ndevices > 4096 || !devices || !fn)
    return muster__err(MUSTER_EINVAL, "muster_run_on_devices: ndevices=%d devices=%p fn=%p", ndevices,
                       (const void *)devices, (void *)(size_t)fn);
  run_shared_t sh = {fn, arg, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, ndevices, 0};
  run_thread_t *t = calloc((size_t)ndevices, sizeof *t);
  if (!t) return muster__err(MUSTER_ENOMEM, "muster_run_on_devices: out of memory for %d threads", ndevices);
  int started = 0, rc = 0;
  for (; started < ndevices; started++) {
    t[started] = (run_thread_t){&sh, started, devices[started], 0, "", 0};
    if (pthread_create(&t[started].tid, NULL, run_one, &t[started]) != 0) break;
  }
  if (started < ndevices) { /* release the started ones without running fn */
    pthread_mutex_lock(&sh.mu);
    sh.failed = 1;
    sh.expected = started;
    pthread_cond_broadcast(&sh.cv);
    pthread_mutex_unlock(&sh.mu);
    rc = muster__err(MUSTER_ESYS, "muster_run_on_devices: could not start thread %d of %d", started, ndevices);
  }
  for (int i = 0; i < started; i++) pthread_join(t[i].tid, NULL);
  if (rc == 0)
    for (int i = 0; i < ndevices; i++)
      if (t[i].rc != 0) {
        rc = t[i].rc;
        if (rc < 0)
          muster__err(rc, "rank %d (device %d): %s", i, t[i].device, t[i].msg);
        else
          muster__err(MUSTER_OK, "rank %d (device %d) returned %d: %s", i, t[i].device, rc, t[i].msg);
        break;
      }
  pthread_mutex_destroy(&sh.mu);
  pthread_cond_destroy(&sh.cv);
  free(t);
  return rc;
}
