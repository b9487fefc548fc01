/* providers/cudacommon/probe.c - count CUDA devices without initializing
 * CUDA in a process that may fork ranks later (cudacommon.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cudacommon.h"

/* Has this process already initialized CUDA (cuInit)?  Then probing here
 * costs nothing and a forked child could not use CUDA anyway.  libcuda being
 * mapped is not enough: cuBLAS/cuSOLVER load it when a GPU provider is
 * dlopen()ed, long before anyone initializes it, and initializing CUDA in
 * the CLI's parent would break the rank processes it forks next.  Every
 * driver call but cuInit answers CUDA_ERROR_NOT_INITIALIZED (3) before
 * cuInit, without initializing anything. */
static int driver_initialized(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  int (*get_count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
  int n = 0, st = get_count ? get_count(&n) : -1;
  dlclose(h);
  return st == 0;
}

typedef struct probe_res {
  int st;     /* cudaError_t */
  int count;
} probe_res_t;

static probe_res_t count_devices_here(void) {
  probe_res_t r = {0, 0};
  r.st = (int)cudaGetDeviceCount(&r.count);
  return r;
}

/* CUDA must not be initialized in a process that forks rank processes
 * afterwards (the CLI probes, then forks), so unless the driver is already
 * initialized here, ask a short-lived child.  count -1: the child died
 * before answering. */
static probe_res_t count_devices(void) {
  probe_res_t r = {(int)cudaErrorUnknown, 0};
  if (driver_initialized()) return count_devices_here();
  int fd[2];
  if (pipe(fd) < 0) return count_devices_here();
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return count_devices_here();
  }
  if (pid == 0) {
    close(fd[0]);
    probe_res_t c = count_devices_here();
    ssize_t w = write(fd[1], &c, sizeof c);
    (void)w;
    _exit(0);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], &r, sizeof r);
  close(fd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != (ssize_t)sizeof r) r = (probe_res_t){(int)cudaErrorUnknown, -1};
  return r;
}

int cuc_probe(int *count, char *why, size_t whylen) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static int cached; /* 1: ok, -1: not, 0: unknown */
  static int cached_count;
  static char cached_why[256];
  pthread_mutex_lock(&mu); /* one probe (and one child) per process */
  if (cached == 0) {
    probe_res_t r = count_devices();
    if (r.count < 0) {
      snprintf(cached_why, sizeof cached_why, "probe child died before reporting the device count");
      cached = -1;
    } else if (r.st != (int)cudaSuccess) {
      snprintf(cached_why, sizeof cached_why, "no usable CUDA driver: cudaGetDeviceCount returned %s (%d): %s",
               cudaGetErrorName((cudaError_t)r.st), r.st, cudaGetErrorString((cudaError_t)r.st));
      cached = -1;
    } else if (r.count == 0) {
      snprintf(cached_why, sizeof cached_why, "no CUDA device: cudaGetDeviceCount found 0");
      cached = -1;
    } else {
      cached_count = r.count;
      cached = 1;
    }
  }
  int ok = cached > 0;
  if (count) *count = ok ? cached_count : 0;
  if (!ok && why && whylen) snprintf(why, whylen, "%s", cached_why);
  pthread_mutex_unlock(&mu);
  return ok ? 0 : MUSTER_ECUDA;
}
